package orders

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestLedgerQueries_OnePartition: the ledger is partitioned by month (00340) and its hot work
// touches one month's partition. Under a generic plan (as a prepared statement runs once cached)
// a month's rows (what an archive reads, and any report by period) are read from that month's
// partition alone, the others pruned when the plan starts; and the rows an acceptance writes land
// in the current month's partition.
func TestLedgerQueries_OnePartition(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `SELECT partman.create_partition_time('public.order_ledger',
		ARRAY(SELECT date_trunc('month', now()) - make_interval(months => m) FROM generate_series(1, 6) AS m))`); err != nil {
		t.Fatal(err)
	}
	custs, perfs := users(t, pool, Customer, 2), users(t, pool, Performer, 1)
	if _, err := pool.Exec(ctx, `INSERT INTO order_ledger (user_id, kind, amount, created_at)
		SELECT $1::bigint, 'grant', 0, date_trunc('month', now()) - make_interval(days => g % 180) FROM generate_series(1, 6000) AS g`, custs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE order_ledger"); err != nil {
		t.Fatal(err)
	}
	var parts int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'order_ledger'::regclass`).Scan(&parts); err != nil || parts < 8 {
		t.Fatalf("%d partitions of the ledger (%v), want the 6 past months, this one and those ahead", parts, err)
	}

	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan;
		PREPARE month_rows(timestamptz, timestamptz) AS
		SELECT kind, sum(amount) FROM order_ledger WHERE created_at >= $1 AND created_at < $2 GROUP BY kind`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
		EXECUTE month_rows(date_trunc('month', now()) - interval '3 months', date_trunc('month', now()) - interval '2 months')`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	scanned := regexp.MustCompile(`on (order_ledger_\w+)`).FindAllStringSubmatch(plan, -1)
	if len(scanned) != 1 || !strings.Contains(plan, "Subplans Removed: "+strconv.Itoa(parts-1)) {
		t.Fatalf("a month's rows under a generic plan read %d partitions, want 1 (%d pruned at start):\n%s", len(scanned), parts-1, plan)
	}

	// An acceptance's three rows go to this month's partition.
	s := NewService(pool, Config{})
	c, p := Principal{ID: custs[0], Type: Customer}, Principal{ID: perfs[0], Type: Performer}
	if err := lifecycle(ctx, s, c, p); err != nil {
		t.Fatal(err)
	}
	var where []string
	rows, err = pool.Query(ctx, `SELECT DISTINCT tableoid::regclass::text FROM order_ledger WHERE order_id IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	if where, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	var current string
	if err := pool.QueryRow(ctx, `SELECT 'order_ledger_p' || to_char(now(), 'YYYY_MM')`).Scan(&current); err != nil {
		t.Fatal(err)
	}
	if len(where) != 1 || where[0] != current {
		t.Fatalf("an acceptance's ledger rows are in %v, want %s alone", where, current)
	}
}
