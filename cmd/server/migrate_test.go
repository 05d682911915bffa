package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// asRole is dbURL with role as its user.
func asRole(t *testing.T, dbURL, role string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// createRole makes a login role with no privileges, unique to the test.
func createRole(t *testing.T, dbURL string) string {
	t.Helper()
	role := fmt.Sprintf("app_%d", time.Now().UnixNano())
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	return role
}

// TestServer_MigrateModeThenRowRole: `-mode migrate` applies the migrations as the owner, grants
// DB_APP_ROLE the rows and exits; a server then runs as that role (which may not create anything)
// and serves writes. Before the migrate run, the same server refuses to start, naming the fix.
func TestServer_MigrateModeThenRowRole(t *testing.T) {
	t.Parallel()
	owner := dbtest.NewEmptyURL(t)
	role := createRole(t, owner)
	app := asRole(t, owner, role)

	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-log-level", "warn", "-mode", "dev", "-database-url", app}, nil)
	if err == nil || !strings.Contains(err.Error(), "-mode migrate") {
		t.Fatalf("a row role's server on an unmigrated database: %v, want the advice to run -mode migrate", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(time.Minute))
	defer cancel()
	if err := run(ctx, []string{"-log-level", "warn", "-mode", "migrate", "-database-url", owner, "-db-app-role", role}, nil); err != nil {
		t.Fatalf("-mode migrate: %v", err)
	}

	base, _ := routerServer(t, "-mode", "dev", "-database-url", app)
	resp, err := http.Post(base+"/api/user/register", "application/json",
		strings.NewReader(`{"name":"Row","email":"row@example.com","password":"a-long-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register through the row role's server: %d", resp.StatusCode)
	}
}

// TestDocs_DeployMigrateCommandAsWritten runs docs/deploy.md's migrate command as a reader would
// type it, with only its database URL pointed at a test database (and `server` on PATH): it exits
// 0, the role it names may then read and write rows, and a second run, on an up-to-date schema,
// exits 0 too.
func TestDocs_DeployMigrateCommandAsWritten(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^DATABASE_DIRECT_URL=(\S+) DB_APP_ROLE=(\w+) server -mode migrate$`).FindStringSubmatch(string(raw))
	if line == nil {
		t.Fatal("docs/deploy.md has no `DATABASE_DIRECT_URL=… DB_APP_ROLE=… server -mode migrate` line")
	}
	owner := dbtest.NewEmptyURL(t)
	conn, err := pgx.Connect(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The role is cluster-wide; another test in the same cluster (make test shares one among all
	// packages: deploy's rollout makes it too) may have made it, or be making it right now.
	if _, err := conn.Exec(context.Background(), `DO $$ BEGIN CREATE ROLE `+line[2]+` LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	command := strings.Replace(line[0], line[1], "'"+owner+"'", 1)
	// The docs call the binary `server` (what `go build ./cmd/server` names it); the test's may be
	// named otherwise (serverbin's own build is triad-server), so `server` on PATH is a link to it.
	bin := t.TempDir()
	if err := os.Symlink(serverBinary(t), filepath.Join(bin, "server")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		cmd := exec.Command("sh", "-c", command)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		for _, unset := range []string{"DATABASE_URL", "MODE", "DATABASE_READ_URL"} {
			cmd.Env = append(cmd.Env, unset+"=")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line[0], err, out)
		}
	}
	app, err := pgx.Connect(context.Background(), asRole(t, owner, line[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(context.Background())
	if _, err := app.Exec(context.Background(), "SELECT count(*) FROM orders"); err != nil {
		t.Fatalf("%s after the documented command: %v", line[2], err)
	}
}
