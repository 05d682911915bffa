package dbtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/triadhq/triad/impl/platform/pgcluster"
)

// Bouncer starts Debian's PgBouncer in transaction mode, with its default settings otherwise, in
// front of the server of dbURL (a database of this package's), and returns the URL of the same
// database through it. users are the roles besides dbURL's that may connect through it. It stops
// when t ends.
func Bouncer(t testing.TB, dbURL string, users ...string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	// Under /tmp rather than t.TempDir: PgBouncer runs as the postgres user when the tests run as
	// root, and must reach its folder; unix socket paths must also stay short.
	dir, err := os.MkdirTemp("", "triad-pgb-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := pgcluster.StartBouncer(ctx, dir, dbURL, users...)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		_ = b.Stop()
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", b.Log())
		}
		os.RemoveAll(dir)
	})
	return b.URL(cfg.User, cfg.Database)
}
