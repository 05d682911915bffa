package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestScaffold_BuildsAndPasses is `make new-surface` on a copy of the repository: the surface it
// writes generates, builds into the server, passes its own tests (a real PostgreSQL), its
// end-to-end test on the server binary, the repository's wiring, names and messages tests, and
// every test of cmd/server that walks the list of surfaces (everySurfaceTests: a new surface must
// not break what the server promises of all of them), and its SDK entry and SDK test type-check,
// with one line changed outside its own files. So the skeleton cannot rot as the kit changes under
// it, and a scaffolded surface keeps `make test` green.
func TestScaffold_BuildsAndPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the repository")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := copyRepo(t, repo)
	if _, err := scaffold(dir, "probe", "auth"); err == nil || !strings.Contains(err.Error(), "tokens") {
		t.Errorf("scaffolding a surface of a token source its tests cannot sign up with: %v, want a refusal", err)
	}
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
	walks := everySurfaceTests(t, filepath.Join(dir, "cmd", "server"))
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		start := time.Now()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		// -trimpath makes the copy's packages the repository's in the build cache, so only what
		// the surface adds or changes compiles (also for the server binary e2e builds).
		cmd.Env = append(os.Environ(), "GOFLAGS=-trimpath")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		t.Logf("%s %s: %v", name, strings.Join(args, " "), time.Since(start).Round(time.Second))
	}
	// What make generate does for this one spec (the rest of gen/ is as committed).
	run("go", "generate", "./gen/openapi") // the bundles, probe's among them, which the rest reads
	run("go", "generate", "./gen/probeapi")
	run("go", "tool", "-modfile=tools/sqlc/go.mod", "sqlc", "generate")
	run("node_modules/.bin/openapi-typescript", "gen/openapi/probe.yaml", "--redocly", "clients/ts/redocly.yaml", "-o", "clients/ts/probe/schema.d.ts")
	run("go", "vet", "./impl/surfaces/probe/...", "./e2e/")
	run("go", "test", "-count=1", "./impl/surfaces/probe/...", "./api/")
	run("go", "test", "-count=1", "-run", "^TestProbe_", "./e2e/")
	run("go", "test", "-count=1", "-run", "^("+strings.Join(walks, "|")+")$", "./cmd/server/")
	run("node_modules/.bin/tsc", "-p", "clients/ts")
}

// everySurfaceTests are the tests of the cmd/server package in dir that walk the list of surfaces:
// those whose body refers, itself or through the package's test helpers, to what lists them (the
// specs in api/, the served specs, the surfaces mounted, the docs' list, dev mode's reset). They are what a new
// surface can break in cmd/server; running them costs a fraction of the whole suite.
func everySurfaceTests(t *testing.T, dir string) []string {
	t.Helper()
	// The skeleton also takes part in dev mode's reset, which answers the surfaces it reset.
	const devReset = "/dev/reset"
	lists := map[string]bool{"api.Names": true, "api.Load": true, "publishedSpecs": true, "specNames": true,
		"swaggerURLs": true, "surfaces": true, devReset: true}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string][]string{} // function → the names its body refers to
	var tests []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				name = "." + name // a method: called as x.name
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok {
						uses[name] = append(uses[name], x.Name+"."+n.Sel.Name)
					}
					uses[name] = append(uses[name], "."+n.Sel.Name)
				case *ast.Ident:
					uses[name] = append(uses[name], n.Name)
				case *ast.BasicLit:
					if strings.Contains(n.Value, devReset) {
						uses[name] = append(uses[name], devReset)
					}
				}
				return true
			})
			if fn.Recv == nil && strings.HasPrefix(name, "Test") && name != "TestMain" {
				tests = append(tests, name)
			}
		}
	}
	// reaches reports whether fn refers to a list, itself or through the functions it refers to.
	seen := map[string]bool{}
	var reaches func(fn string) bool
	reaches = func(fn string) bool {
		if seen[fn] {
			return false
		}
		seen[fn] = true
		for _, u := range uses[fn] {
			if lists[u] || reaches(u) {
				return true
			}
		}
		return false
	}
	var walks []string
	for _, test := range tests {
		clear(seen)
		if reaches(test) {
			walks = append(walks, test)
		}
	}
	if !slices.Contains(walks, "TestSurfaces_EverySpecIsMounted") {
		t.Fatalf("found %v in %s, not even TestSurfaces_EverySpecIsMounted: the walk is broken", walks, dir)
	}
	t.Logf("cmd/server tests that walk the surfaces: %v", walks)
	return walks
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
