package migrate_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/migrate"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// newPool opens a pool of at most max connections on a fresh empty database.
func newPool(t *testing.T, max int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dbtest.NewEmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = max
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestExclusive_MigratesThroughAPoolOfOne: the start-up lock is not one of the pool's connections,
// so Up (which needs one for goose's lock and the migrations) finishes with a pool of one.
func TestExclusive_MigratesThroughAPoolOfOne(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := migrate.Exclusive(ctx, pool, func(ctx context.Context) error { return migrate.Up(ctx, pool) })
	if err != nil {
		t.Fatalf("start-up with a pool of one: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM goose_db_version WHERE version_id > 0").Scan(&n); err != nil || n == 0 {
		t.Fatalf("%d migrations applied (%v)", n, err)
	}
}

// TestExclusive_OneAtATimeAndFreedAfter: callers on one database take turns, and the lock is free
// again once fn returns, with an error too.
func TestExclusive_OneAtATimeAndFreedAfter(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var inside, most atomic.Int32
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			errs <- migrate.Exclusive(ctx, pool, func(context.Context) error {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(50 * time.Millisecond)
				inside.Add(-1)
				return context.Canceled // an error must not keep the lock
			})
		}()
	}
	for range 4 {
		if err := <-errs; err != context.Canceled {
			t.Fatalf("Exclusive returned %v, want fn's error", err)
		}
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d callers inside at once, want 1", m)
	}
}
