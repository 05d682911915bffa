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

// recordingHook writes a row in Before and one with the result in After, and fails where told.
type recordingHook struct{ failBefore, failAfter error }

func (h recordingHook) Before(ctx context.Context, tx pgx.Tx) error {
	if h.failBefore != nil {
		return h.failBefore
	}
	_, err := tx.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('before', 'x')")
	return err
}

func (h recordingHook) After(ctx context.Context, tx pgx.Tx, result any) error {
	if _, err := tx.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('after', $1)", result.(string)); err != nil {
		return err
	}
	return h.failAfter
}

// TestWrite_HookInTheWritesTransaction: a write under a Hook commits the hook's rows and its own
// together, After given the write's result; a hook or write failure anywhere leaves none of them.
// WriteOne without a hook runs autocommitted; with one, in the transaction.
func TestWrite_HookInTheWritesTransaction(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	rows := func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM platform_info").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	write := func(c pgtx.Conn) (string, error) {
		_, err := c.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('write', 'w')")
		return "the result", err
	}
	boom := errors.New("boom")
	for _, h := range []recordingHook{{failBefore: boom}, {failAfter: boom}} {
		if _, err := pgtx.WriteOne(pgtx.WithHook(ctx, h), pool, write); !errors.Is(err, boom) {
			t.Fatalf("a failing hook: err %v, want boom", err)
		}
		if n := rows(); n != 0 {
			t.Fatalf("a failing hook left %d rows, want none", n)
		}
	}
	if _, err := pgtx.Write(pgtx.WithHook(ctx, recordingHook{}), pool, func(tx pgx.Tx) (string, error) {
		_, _ = write(tx)
		return "", boom
	}); !errors.Is(err, boom) || rows() != 0 {
		t.Fatalf("a failing write: err %v, %d rows; want boom and none", err, rows())
	}
	got, err := pgtx.WriteOne(pgtx.WithHook(ctx, recordingHook{}), pool, write)
	if err != nil || got != "the result" {
		t.Fatalf("WriteOne = %q, %v", got, err)
	}
	var after string
	if err := pool.QueryRow(ctx, "SELECT value FROM platform_info WHERE key = 'after'").Scan(&after); err != nil || after != "the result" || rows() != 3 {
		t.Fatalf("after the write: %d rows, After saw %q (%v); want 3 rows and the result", rows(), after, err)
	}
	if _, err := pool.Exec(ctx, "DELETE FROM platform_info"); err != nil {
		t.Fatal(err)
	}
	if _, err := pgtx.WriteOne(ctx, pool, write); err != nil || rows() != 1 {
		t.Fatalf("WriteOne without a hook: %v, %d rows; want the write alone", err, rows())
	}
}
