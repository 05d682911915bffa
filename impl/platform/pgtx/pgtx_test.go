package pgtx_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// Serializable increments that collide must all land thanks to the retry.
func TestRun_RetriesSerializationFailures(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('n', '0')"); err != nil {
		t.Fatal(err)
	}
	const workers = 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- pgtx.Run(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable}, func(tx pgx.Tx) error {
				var v int
				if err := tx.QueryRow(ctx, "SELECT value::int FROM platform_info WHERE key = 'n'").Scan(&v); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, "UPDATE platform_info SET value = $1::int::text WHERE key = 'n'", v+1)
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	var got int
	if err := pool.QueryRow(ctx, "SELECT value::int FROM platform_info WHERE key = 'n'").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != workers {
		t.Fatalf("counter = %d, want %d: an increment was lost", got, workers)
	}
}

func TestRun_ReturnsOtherErrorsAndRollsBack(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := pgtx.Run(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('x', 'y')"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	var n int
	_ = pool.QueryRow(ctx, "SELECT count(*) FROM platform_info").Scan(&n)
	if n != 0 {
		t.Fatalf("rolled-back insert is visible: %d rows", n)
	}
}

// A batch whose statement fails mid-transaction leaves the connection in an aborted transaction;
// EndOpen ends it so the connection is usable (and poolable) again, and nothing the batch wrote
// before the failure stays.
func TestEndOpen_AfterFailedBatch(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("INSERT INTO platform_info (key, value) VALUES ('half', 'done')")
	b.Queue("SELECT 1/0")
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err == nil {
		t.Fatal("the batch with a division by zero succeeded")
	}
	if st := conn.Conn().PgConn().TxStatus(); st == 'I' {
		t.Fatal("setup: the failed batch left no transaction open; the test proves nothing")
	}
	cancel() // the request that ran the batch may be gone by now; the rollback still happens
	pgtx.EndOpen(ctx, conn.Conn())
	if st := conn.Conn().PgConn().TxStatus(); st != 'I' {
		t.Fatalf("transaction status %q after EndOpen, want idle", st)
	}
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM platform_info WHERE key = 'half'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("after EndOpen: %d rows, err %v; want the insert rolled back", n, err)
	}
}
