package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/serverbin"
)

// TestScaffold_BuildsAndPasses is `make new-surface` on a copy of the repository: the surface it
// writes generates, builds into the server, passes its own tests (a real PostgreSQL) and its
// end-to-end test on the server binary in each of make test's modes as written (plain, through
// Prism as make contract runs it, behind HAProxy over three replicas as make test-replicas does),
// and its SDK entry and SDK test type-check, with one line changed outside its own files. Its table
// is given a foreign key to orders, as a review of an order would have, and dev mode's reset still
// answers 200 with a referencing row in place. So the skeleton cannot rot as the kit changes under
// it, and a scaffolded surface keeps `make test` green.
//
// It costs what the surface changes, not a rebuild: the copy builds with -trimpath, as
// impl/testkit/serverbin builds the server for make test, so every package the surface leaves alone
// comes from the build cache. The walks of cmd/server over every surface are not run again here:
// they run over the committed surfaces in cmd/server's own tests.
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
	referToOrders(t, dir)
	// The copy's tests build the copy's server (with the probe), not the one make test built.
	env := []string{"GOFLAGS=-trimpath"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, serverbin.Env+"=") && !strings.HasPrefix(kv, serverbin.RaceEnv+"=") && !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	runIn := func(in string, extra []string, name string, args ...string) {
		t.Helper()
		start := time.Now()
		// No deadline of its own: go test's package timeout is the backstop, so a busy machine
		// makes this slower, not red.
		cmd := exec.Command(name, args...)
		cmd.Dir = in
		cmd.Env = append(slices.Clone(env), extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s %s: %v\n%s", strings.Join(extra, " "), name, strings.Join(args, " "), err, out)
		}
		t.Logf("%s %s %s: %v", strings.Join(extra, " "), name, strings.Join(args, " "), time.Since(start).Round(time.Second))
	}
	run := func(extra []string, name string, args ...string) {
		t.Helper()
		runIn(dir, extra, name, args...)
	}
	// What make generate does for this one spec (the rest of gen/ is as committed).
	run(nil, "go", "generate", "./gen/openapi") // the bundles, probe's among them, which the rest reads
	run(nil, "go", "generate", "./gen/probeapi")
	run(nil, "go", "tool", "-modfile=tools/sqlc/go.mod", "sqlc", "generate")
	run(nil, "node_modules/.bin/openapi-typescript", "gen/openapi/probe.yaml", "--redocly", "clients/ts/redocly.yaml", "-o", "clients/ts/probe/schema.d.ts")
	run(nil, "go", "vet", "./impl/surfaces/probe/...")
	run(nil, "go", "test", "-count=1", "./impl/surfaces/probe/...", "./api/")
	// The end-to-end test in each mode, as make test, make contract and make test-replicas run it,
	// from one build of the copy's server (with the probe) and one of its e2e test binary (with the
	// replicas tag: the other modes leave its files unused), not one of each per mode.
	server := filepath.Join(dir, "triad-server-probe")
	run(nil, "go", "build", "-o", server, "./cmd/server")
	e2eTest := filepath.Join(dir, "e2e.test")
	run(nil, "go", "test", "-c", "-tags", "replicas", "-o", e2eTest, "./e2e/")
	e2eDir, withServer := filepath.Join(dir, "e2e"), serverbin.Env+"="+server
	probe := "^(TestProbe_.*)$"
	runIn(e2eDir, []string{withServer}, e2eTest, "-test.count=1", "-test.run", probe)
	runIn(e2eDir, []string{withServer, "TRIAD_E2E_PRISM=1"}, e2eTest, "-test.count=1", "-test.run", "^TestProbe_ItemsThroughGeneratedClient$")
	runIn(e2eDir, []string{withServer, "TRIAD_E2E_REPLICAS=3"}, e2eTest, "-test.count=1", "-test.run", "^TestProbe_ItemsThroughGeneratedClient$")
	run(nil, "node_modules/.bin/tsc", "-p", "clients/ts")
}

// referToOrders gives the scaffolded probe table a column referencing orders, as a newcomer's
// "reviews" surface would, and adds to the copy's e2e package a test that dev mode's reset answers
// 200 with such a row in place and empties the probe table with orders.
func referToOrders(t *testing.T, dir string) {
	t.Helper()
	migrations, err := filepath.Glob(filepath.Join(dir, "db", "schema", "*probe*.sql"))
	if err != nil || len(migrations) != 1 {
		t.Fatalf("the probe's migration: %v (%v)", migrations, err)
	}
	body, err := os.ReadFile(migrations[0])
	if err != nil {
		t.Fatal(err)
	}
	const create = "CREATE TABLE probe_items (\n"
	if !strings.Contains(string(body), create) {
		t.Fatalf("the probe's migration creates no probe_items table:\n%s", body)
	}
	body = []byte(strings.Replace(string(body), create, create+"    order_id   bigint REFERENCES orders (id),\n", 1))
	if err := os.WriteFile(migrations[0], body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "e2e", "probe_reset_test.go"), []byte(resetTest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resetTest is the copy's test of dev mode's reset over a table that references orders.
const resetTest = `package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestProbe_DevResetOverAForeignKeyToOrders(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO probe_items (owner, text, order_id) SELECT 'orders:1', 'a review', min(id) FROM orders"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dev/reset", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "probe") {
		t.Fatalf("POST /dev/reset with a probe row referencing an order: %d %s, want 200 naming probe", resp.StatusCode, body)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM probe_items").Scan(&n); err != nil || n != 0 {
		t.Fatalf("probe rows after the reset: %d (%v), want 0", n, err)
	}
}

`

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
