package pgtx_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/pgtx"
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
