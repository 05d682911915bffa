package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/db/schema"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// Three servers started at the same instant on an empty database all come up; the schema is
// applied once and the dev data loaded once (no second copy of the demo orders, no failed start
// on a duplicate migration or a unique violation).
func TestServer_ReplicasStartTogetherOnAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewEmptyURL(t)
	const replicas = 3
	type started struct {
		base string
		err  error
	}
	results := make(chan started, replicas)
	for range replicas {
		go func() {
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-log-level", "warn", "-mode", "dev", "-database-url", dbURL}, ready)
			}()
			t.Cleanup(func() { cancel(); <-done })
			select {
			case addr := <-ready:
				results <- started{base: "http://" + addr}
			case err := <-done:
				done <- err
				results <- started{err: err}
			}
		}()
	}
	for range replicas {
		r := <-results
		if r.err != nil {
			t.Fatalf("a replica did not start: %v", r.err)
		}
		if status, _, body := get(t, r.base+"/readyz"); status != http.StatusOK {
			t.Fatalf("replica not ready: %d %s", status, body)
		}
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	migrations, err := schema.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files int
	for _, m := range migrations {
		if !m.IsDir() && len(m.Name()) > 4 && m.Name()[len(m.Name())-4:] == ".sql" {
			files++
		}
	}
	var applied, distinct int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0").Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if applied != files || distinct != files {
		t.Fatalf("goose_db_version has %d rows for %d versions, want each of the %d migrations once", applied, distinct, files)
	}
	counts := []struct {
		what, sql string
		want      int
	}{
		{"orders demo users", "SELECT count(*) FROM order_users", 4},
		{"brands admins", "SELECT count(*) FROM brand_users WHERE is_admin", 1},
	}
	for _, c := range counts {
		var n int
		if err := conn.QueryRow(ctx, c.sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Fatalf("%s: %d, want %d", c.what, n, c.want)
		}
	}
	var orders, distinctDescriptions int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT description) FROM orders").Scan(&orders, &distinctDescriptions); err != nil {
		t.Fatal(err)
	}
	if orders == 0 || orders != distinctDescriptions {
		t.Fatalf("dev orders loaded more than once: %d orders, %d distinct descriptions", orders, distinctDescriptions)
	}
}

// A pool of one connection is enough to start: the start-up lock is held on a connection of its
// own, not on the one the migrations and the dev data need (they used to wait for it forever).
func TestServer_StartsWithAPoolOfOne(t *testing.T) {
	t.Parallel()
	base, stop := testServer(t, "-mode", "dev", "-db-max-conns", "1", "-database-url", dbtest.NewEmptyURL(t))
	if status, _, body := get(t, base+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz: %d %s", status, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
