package sweep_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/platform/sweep"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// observed records what a Leader reports.
type observed struct{ runs, rows atomic.Int64 }

func (o *observed) Swept(_ string, rows int64, _ time.Time, _ error) { o.runs.Add(1); o.rows.Add(rows) }

// TestLeader_OneReplicaSweepsInBatches: of two replicas over one database, only the lease's holder
// runs a sweep (the other skips, and its observer hears nothing); the holder deletes 2,500 expired
// rows in three batches of at most BatchSize, renewing its lease before each; when the lease is
// taken from it between two batches (it stalled past it), it stops after the batch in progress.
func TestLeader_OneReplicaSweepsInBatches(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE expiring (id int PRIMARY KEY);
		INSERT INTO expiring SELECT g FROM generate_series(1, 2500) AS g`); err != nil {
		t.Fatal(err)
	}
	var batches []int64
	batch := func(ctx context.Context) (int64, error) {
		tag, err := pool.Exec(ctx, `DELETE FROM expiring WHERE id IN (SELECT id FROM expiring ORDER BY id LIMIT 1000)`)
		batches = append(batches, tag.RowsAffected())
		return tag.RowsAffected(), err
	}
	sweepOf := func(l *sweep.Leader) sweep.Func {
		return l.Wrap("expiring", time.Hour, func(ctx context.Context) (int64, error) { return sweep.Batches(ctx, batch) })
	}
	var obsA, obsB observed
	a, b := sweep.NewLeader(pool, &obsA), sweep.NewLeader(pool, &obsB)
	if n, err := sweepOf(a)(ctx); err != nil || n != 2500 {
		t.Fatalf("the first replica swept %d rows (%v), want 2500", n, err)
	}
	if len(batches) != 3 || batches[0] != sweep.BatchSize || batches[2] != 500 {
		t.Fatalf("batches %v, want 1000, 1000, 500", batches)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO expiring SELECT g FROM generate_series(1, 2500) AS g`); err != nil {
		t.Fatal(err)
	}
	if n, err := sweepOf(b)(ctx); err != nil || n != 0 || obsB.runs.Load() != 0 {
		t.Fatalf("the second replica swept %d rows (%v, %d runs observed) while the first holds the lease", n, err, obsB.runs.Load())
	}
	// The first replica's lease runs out while it works: another replica claims it after the
	// first batch, and the first stops there.
	batches = nil
	stalled := a.Wrap("expiring", time.Hour, func(ctx context.Context) (int64, error) {
		return sweep.Batches(ctx, func(ctx context.Context) (int64, error) {
			n, err := batch(ctx)
			if _, err := pool.Exec(ctx, `UPDATE sweep_leases SET until = now() - interval '1 second' WHERE name = 'expiring'`); err != nil {
				return n, err
			}
			if _, err := sweepOf(b)(ctx); err != nil { // takes the lease (and sweeps the rest)
				return n, err
			}
			return n, err
		})
	})
	n, err := stalled(ctx)
	if err != nil || n != 1000 {
		t.Fatalf("the stalled leader swept %d rows (%v), want the one batch before it lost the lease", n, err)
	}
	if obsA.runs.Load() != 2 || obsA.rows.Load() != 3500 || obsB.rows.Load() != 1500 {
		t.Fatalf("observed: first %d runs %d rows, second %d rows", obsA.runs.Load(), obsA.rows.Load(), obsB.rows.Load())
	}
}
