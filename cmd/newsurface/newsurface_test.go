package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScaffold_BuildsAndPasses is `make new-surface` on a copy of the repository: the surface it
// writes generates, builds into the server, passes its own tests (a real PostgreSQL) and the
// repository's wiring, names and messages tests, and its SDK entry type-checks, with one line
// changed outside its own files. So the skeleton cannot rot as the kit changes under it.
func TestScaffold_BuildsAndPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the repository")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := copyRepo(t, repo)
	files, err := scaffold(dir, "probe", "orders")
	if err != nil {
		t.Fatal(err)
	}
	var outside []string
	for _, f := range files {
		if !strings.Contains(f, "probe") {
			outside = append(outside, f)
		}
	}
	if len(outside) != 1 || outside[0] != filepath.Join("cmd", "server", "surfaces.go") {
		t.Errorf("files changed outside the surface's own: %v, want only cmd/server/surfaces.go", outside)
	}
	if _, err := scaffold(dir, "probe", "orders"); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("scaffolding probe twice: %v, want a refusal", err)
	}
	if _, err := scaffold(dir, "orders", "orders"); err == nil {
		t.Error("scaffolding over an existing surface's paths was not refused")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	// What make generate does for this one spec (the rest of gen/ is as committed).
	run("go", "generate", "./gen/openapi") // the bundles, probe's among them, which the rest reads
	run("go", "generate", "./gen/probeapi")
	run("go", "tool", "-modfile=tools/sqlc/go.mod", "sqlc", "generate")
	run("node_modules/.bin/openapi-typescript", "gen/openapi/probe.yaml", "--redocly", "clients/ts/redocly.yaml", "-o", "clients/ts/probe/schema.d.ts")
	// -trimpath makes the copy's packages the repository's in the build cache, so only what the
	// surface adds or changes compiles.
	run("go", "vet", "-trimpath", "./impl/surfaces/probe/...")
	run("go", "test", "-trimpath", "-count=1", "./impl/surfaces/probe/...", "./api/")
	run("go", "test", "-trimpath", "-count=1", "-run", "^TestSurfaces_EverySpecIsMounted$", "./cmd/server/")
	run("node_modules/.bin/tsc", "-p", "clients/ts")
}

// copyRepo copies the repository's tracked and untracked (not ignored) files into a temporary
// folder, with node_modules linked rather than copied.
func copyRepo(t *testing.T, repo string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" || f == "node_modules" || strings.HasPrefix(f, "node_modules/") {
			continue
		}
		src := filepath.Join(repo, f)
		info, err := os.Lstat(src)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in git
			}
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		body, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	modules, err := filepath.EvalSymlinks(filepath.Join(repo, "node_modules"))
	if err != nil {
		t.Fatalf("node_modules (make deps-npm): %v", err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}
