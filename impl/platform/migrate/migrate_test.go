package migrate_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/testkit/dbtest"
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
	err := migrate.Exclusive(ctx, pool.Config().ConnConfig, func(ctx context.Context) error { return migrate.Up(ctx, pool) })
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
			errs <- migrate.Exclusive(ctx, pool.Config().ConnConfig, func(context.Context) error {
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

// connConfig parses url, as the role user when not empty.
func connConfig(t *testing.T, url, user string) *pgx.ConnConfig {
	t.Helper()
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		cc.User = user
	}
	return cc
}

// TestEnsure_OwnerMigratesRowRoleStarts: the owner applies the migrations (once: the second run
// finds nothing to do) and grants a role rows only; that role then passes Ensure on the migrated
// database without changing anything, reads and writes rows, and may not create a table; on a
// database nobody migrated, Ensure as that role fails saying what to run.
func TestEnsure_OwnerMigratesRowRoleStarts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := dbtest.NewEmptyURL(t)
	owner := connConfig(t, url, "")
	if applied, err := migrate.Ensure(ctx, owner); err != nil || !applied {
		t.Fatalf("first Ensure as the owner: applied %v, %v", applied, err)
	}
	if applied, err := migrate.Ensure(ctx, owner); err != nil || applied {
		t.Fatalf("second Ensure as the owner: applied %v, %v; want nothing to do", applied, err)
	}
	role := fmt.Sprintf("dml_%d", time.Now().UnixNano())
	conn, err := pgx.ConnectConfig(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.ConnectConfig(context.Background(), owner)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+role)
			_ = c.Close(context.Background())
		}
		// The role itself goes with the database's last privileges; dbtest drops the database.
	})
	if err := migrate.Grant(ctx, conn, role); err != nil {
		t.Fatal(err)
	}

	dml := connConfig(t, url, role)
	if applied, err := migrate.Ensure(ctx, dml); err != nil || applied {
		t.Fatalf("Ensure as the row role on the migrated database: applied %v, %v", applied, err)
	}
	rc, err := pgx.ConnectConfig(ctx, dml)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close(ctx)
	if _, err := rc.Exec(ctx, "INSERT INTO auth_used_ids (id, expires_at) VALUES ('x', now())"); err != nil {
		t.Fatalf("the row role cannot write a row: %v", err)
	}
	if _, err := rc.Exec(ctx, "DELETE FROM auth_used_ids"); err != nil {
		t.Fatalf("the row role cannot delete a row: %v", err)
	}
	if _, err := rc.Exec(ctx, "CREATE TABLE intruder (x int)"); err == nil {
		t.Fatal("the row role created a table")
	}

	_, err = migrate.Ensure(ctx, connConfig(t, dbtest.NewEmptyURL(t), role))
	if err == nil || !strings.Contains(err.Error(), "-mode migrate") {
		t.Fatalf("Ensure as the row role on an empty database: %v, want the advice to run server -mode migrate", err)
	}
}

// TestExclusive_ThroughTransactionPooler: the start-up lock holds through PgBouncer in transaction
// mode (default settings): callers take turns, and each one's lock ends with it. A session lock
// stayed on the pooled server connection after its caller left, and the next caller waited forever.
func TestExclusive_ThroughTransactionPooler(t *testing.T) {
	t.Parallel()
	url := dbtest.Bouncer(t, dbtest.NewURL(t))
	cc := connConfig(t, url, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var inside, most atomic.Int32
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			errs <- migrate.Exclusive(ctx, cc, func(ctx context.Context) error {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				_, err := migrate.Ensure(ctx, cc)
				time.Sleep(50 * time.Millisecond)
				inside.Add(-1)
				return err
			})
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("Exclusive through the pooler: %v", err)
		}
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d callers inside at once, want 1", m)
	}
}

// TestExclusive_ConcurrentIndexBuildWhileOthersWait: a server holding the start-up lock builds an
// index CONCURRENTLY (as migration 00330 does) while another server waits for the lock; the build
// finishes. A holder or a waiter that kept a snapshot open would have the build wait for it while
// it waits for the build, for ever (the bound here only ends the test).
func TestExclusive_ConcurrentIndexBuildWhileOthersWait(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := pool.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	cc := pool.Config().ConnConfig
	waiter := make(chan error, 1)
	err := migrate.Exclusive(ctx, cc, func(ctx context.Context) error {
		go func() { waiter <- migrate.Exclusive(ctx, cc, func(context.Context) error { return nil }) }()
		// The waiter is trying for the lock once its session shows in pg_stat_activity.
		for {
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND query LIKE '%pg_try_advisory_xact_lock%' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
				return err
			}
			if n >= 2 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_, err := pool.Exec(ctx, "CREATE INDEX CONCURRENTLY t_x ON t (x)")
		return err
	})
	if err != nil {
		t.Fatalf("index build under the start-up lock: %v", err)
	}
	if err := <-waiter; err != nil {
		t.Fatalf("the waiting caller: %v", err)
	}
}

// TestVersions_NamesWhatTheBinaryExpectsAndFinds: an empty database has version 0; once migrated
// it has the binary's newest; after a later release's migration (a rollback's situation) it has
// more than the binary expects.
func TestVersions_NamesWhatTheBinaryExpectsAndFinds(t *testing.T) {
	t.Parallel()
	pool := newPool(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cc := pool.Config().ConnConfig
	expects, finds, err := migrate.Versions(ctx, cc)
	if err != nil || expects <= 0 || finds != 0 {
		t.Fatalf("empty database: expects %d finds %d (%v), want a positive version and 0", expects, finds, err)
	}
	if _, err := migrate.Ensure(ctx, cc); err != nil {
		t.Fatal(err)
	}
	if e, f, err := migrate.Versions(ctx, cc); err != nil || e != expects || f != expects {
		t.Fatalf("migrated: expects %d finds %d (%v), want both %d", e, f, err, expects)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", expects+10); err != nil {
		t.Fatal(err)
	}
	if e, f, err := migrate.Versions(ctx, cc); err != nil || e != expects || f != expects+10 {
		t.Fatalf("after a later release: expects %d finds %d (%v), want %d and %d", e, f, err, expects, expects+10)
	}
}
