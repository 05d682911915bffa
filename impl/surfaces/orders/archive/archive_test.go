package archive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/surfaces/orders/archive"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// seedMonths makes the ledger's partitions of the last 4 months and fills them: 30 customers and
// 30 performers (grants 5 months ago), 3,000 orders completed over the last 120 days (three
// ledger rows each), 300 cancelled ones, 200 still waiting (one with a release row), with the
// balances, platform slots and list counts their moves would have left.
func seedMonths(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `
		SELECT partman.create_partition_time('public.order_ledger',
			ARRAY(SELECT date_trunc('month', now()) - make_interval(months => m) FROM generate_series(1, 5) AS m));
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT 'arch-' || k || g, 'x', CASE k WHEN 'c' THEN 'Customer' ELSE 'Performer' END, CASE k WHEN 'c' THEN 100000000 ELSE 0 END
			FROM generate_series(1, 30) AS g, (VALUES ('c'), ('p')) AS v(k) RETURNING id, balance
		)
		INSERT INTO order_ledger (user_id, kind, amount, created_at)
		SELECT id, 'grant', balance, date_trunc('month', now()) - interval '4 months' FROM u WHERE balance > 0;
		CREATE TEMP TABLE seeded (id bigint, customer_id bigint, performer_id bigint, price bigint, held bigint, status text, updated_at timestamptz);
		WITH users AS (
			SELECT array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Customer') AS c,
			       array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Performer') AS p FROM order_users
		), o AS (
			INSERT INTO orders (customer_id, performer_id, description, price, held, status, created_at, updated_at)
			SELECT users.c[1 + g % 30], CASE WHEN g <= 3000 THEN users.p[1 + (g * 7) % 30] END, 'archived ' || g, 100 + g % 900,
			       100 + g % 900 + order_commission(100 + g % 900), CASE WHEN g <= 3000 THEN 'COMPLETED' ELSE 'CANCELLED' END,
			       t, t + interval '1 hour'
			FROM users, generate_series(1, 3300) AS g,
			     LATERAL (SELECT date_trunc('month', now()) - interval '4 months' + make_interval(secs => (g * 104729) % 10368000)) AS ts(t)
			RETURNING id, customer_id, performer_id, price, held, status, updated_at
		)
		INSERT INTO seeded SELECT * FROM o;
		INSERT INTO order_ledger (user_id, order_id, kind, amount, created_at)
		SELECT r.user_id, s.id, r.kind, r.amount, s.updated_at FROM seeded s,
		LATERAL (VALUES (s.customer_id, 'payment', -s.held), (s.performer_id, 'earning', s.price),
		                (NULL::bigint, 'commission', s.held - s.price)) AS r(user_id, kind, amount)
		WHERE s.status = 'COMPLETED'
		UNION ALL SELECT s.customer_id, s.id, 'cancel', 0, s.updated_at FROM seeded s WHERE s.status = 'CANCELLED';
		UPDATE order_users u SET balance = u.balance + d.amount
		FROM (SELECT customer_id AS id, -sum(held) AS amount FROM seeded WHERE status = 'COMPLETED' GROUP BY 1
		      UNION ALL SELECT performer_id, sum(price) FROM seeded WHERE status = 'COMPLETED' GROUP BY 1) d WHERE u.id = d.id;
		UPDATE order_platform_slots p SET balance = p.balance + d.amount
		FROM (SELECT id % 16 AS slot, sum(held - price) AS amount FROM seeded WHERE status = 'COMPLETED' GROUP BY 1) d WHERE p.slot = d.slot;
		WITH w AS (
			INSERT INTO orders (customer_id, description, price, held, created_at, updated_at)
			SELECT c.id, 'still waiting', 100, 105, date_trunc('month', now()) - interval '4 months' + interval '1 day',
			       date_trunc('month', now()) - interval '4 months' + interval '2 days'
			FROM order_users c, generate_series(1, 200 / 30 + 1) AS g WHERE c.user_type = 'Customer' RETURNING id, customer_id, held, updated_at
		), r AS (UPDATE order_users u SET reserved = u.reserved + x.held FROM (SELECT customer_id, sum(held) AS held FROM w GROUP BY 1) x WHERE u.id = x.customer_id),
		l AS (INSERT INTO order_ledger (user_id, order_id, kind, amount, created_at)
			SELECT p.id, (SELECT min(id) FROM w), 'release', 0, (SELECT min(updated_at) FROM w) FROM order_users p WHERE p.username = 'arch-p1')
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT 'waiting', 0, 0, count(*) FROM w UNION ALL SELECT 'customer', customer_id, 0, count(*) FROM w GROUP BY customer_id
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n;
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT s.scope, s.owner_id, 0, count(*) FROM seeded,
		LATERAL (VALUES ('customer', customer_id), ('performer', performer_id)) AS s(scope, owner_id) WHERE s.owner_id IS NOT NULL GROUP BY 1, 2
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n;
		INSERT INTO order_cooldowns (order_id, performer_id, until)
		SELECT s.id, s.performer_id, s.updated_at + interval '1 day' FROM seeded s WHERE s.status = 'COMPLETED' AND s.id % 100 = 0`); err != nil {
		t.Fatal(err)
	}
	checkMoney(t, pool)
}

// state is what a round trip must give back: a digest of every ledger row, order, cool-down and
// list size, and the sums a customer's balance is proven by.
type state struct {
	ledger, orders, cooldowns, lists string
	ledgerRows, orderRows            int64
	sum                              int64
}

func snapshot(t *testing.T, pool *pgxpool.Pool) state {
	t.Helper()
	var s state
	if err := pool.QueryRow(context.Background(), `SELECT
		(SELECT md5(string_agg(l::text, ',' ORDER BY id)) FROM order_ledger l),
		(SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM orders o),
		(SELECT md5(coalesce(string_agg(c::text, ',' ORDER BY order_id, performer_id), '')) FROM order_cooldowns c),
		(SELECT md5(string_agg(s::text, ',' ORDER BY scope, owner_id)) FROM order_list_sizes s WHERE n <> 0),
		(SELECT count(*) FROM order_ledger), (SELECT count(*) FROM orders), (SELECT sum(amount) FROM order_ledger)`).
		Scan(&s.ledger, &s.orders, &s.cooldowns, &s.lists, &s.ledgerRows, &s.orderRows, &s.sum); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkMoney asserts the money and list invariants as they stand with archives: each balance is
// the sum of its account's ledger rows (opening rows included), the platform's the commissions
// plus its opening rows, no balance is negative, and each list size is its list's orders.
func checkMoney(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var bad int64
	if err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM order_users WHERE balance < 0 OR reserved > balance)
		+ (SELECT count(*) FROM order_users u WHERE u.balance <> (SELECT coalesce(sum(amount), 0) FROM order_ledger l WHERE l.user_id = u.id))
		+ abs((SELECT sum(balance) FROM order_platform_slots) - (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE user_id IS NULL))
		+ (SELECT count(*) FROM (
			SELECT 'waiting' AS scope, 0::bigint AS owner_id, count(*) AS n FROM orders WHERE status = 'WAITING'
			UNION ALL SELECT 'customer', customer_id, count(*) FROM orders GROUP BY customer_id
			UNION ALL SELECT 'performer', performer_id, count(*) FROM orders WHERE performer_id IS NOT NULL GROUP BY performer_id
		) real FULL JOIN order_list_sizes c USING (scope, owner_id) WHERE coalesce(real.n, 0) <> coalesce(c.n, 0))`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d money or list invariants broken", bad)
	}
}

// TestArchive_RoundTrip: with a horizon that leaves the last 2 months and this one, the months
// before go to
// files (each named in a manifest with its checksum), the oldest first: their partitions are gone,
// their finished orders too, the open ones stay, and every balance is still its ledger rows' sum
// (opening rows in place of the months). Put back newest first, the ledger, orders, cool-downs
// and list sizes are exactly as before, row for row. A file changed since is refused.
func TestArchive_RoundTrip(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	seedMonths(t, pool)
	before := snapshot(t, pool)
	dir := t.TempDir()
	// The months of 5 (empty), 4 and 3 months back end before the horizon.
	now := time.Now()
	cut := time.Date(now.Year(), now.Month()-2, 1, 0, 0, 0, 0, time.UTC)
	horizon := now.Sub(cut) - time.Hour
	var finished int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orders WHERE status IN ('COMPLETED', 'CANCELLED') AND updated_at < $1", cut).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	mans, err := archive.Archive(ctx, pool, archive.Options{Dir: dir, Horizon: horizon})
	if err != nil {
		t.Fatal(err)
	}
	if len(mans) != 3 {
		t.Fatalf("archived %d months, want the 3 that ended before the horizon", len(mans))
	}
	var archivedOrders, archivedRows int64
	for _, m := range mans {
		archivedOrders += m.Files["orders"].Rows
		archivedRows += m.Files["order_ledger"].Rows
		var left bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", m.Partition).Scan(&left); err != nil || left {
			t.Fatalf("%s still exists after its archive (%v)", m.Partition, err)
		}
	}
	after := snapshot(t, pool)
	if archivedOrders != finished || finished == 0 || after.orderRows != before.orderRows-archivedOrders {
		t.Fatalf("archived %d orders of the %d finished before the horizon; %d orders before, %d after", archivedOrders, finished, before.orderRows, after.orderRows)
	}
	var waiting int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orders WHERE status = 'WAITING'").Scan(&waiting); err != nil || waiting == 0 {
		t.Fatalf("the open orders went too: %d left (%v)", waiting, err)
	}
	if after.sum != before.sum || after.ledgerRows >= before.ledgerRows {
		t.Fatalf("ledger: %d rows summing %d before, %d rows summing %d after", before.ledgerRows, before.sum, after.ledgerRows, after.sum)
	}
	checkMoney(t, pool)

	// A file that changed since is refused before anything is touched.
	last := filepath.Join(dir, mans[len(mans)-1].Partition)
	good, err := os.ReadFile(filepath.Join(last, "orders.copy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(last, "orders.copy"), append([]byte{'9'}, good...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Restore(ctx, pool, last); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("restore of a changed file: %v, want a checksum refusal", err)
	}
	if err := os.WriteFile(filepath.Join(last, "orders.copy"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	// A month cannot come back before the one archived after it (the first is empty).
	if _, err := archive.Restore(ctx, pool, filepath.Join(dir, mans[1].Partition)); err == nil {
		t.Fatal("restored the oldest month while a later archive holds its opening rows")
	}
	for i := len(mans) - 1; i >= 0; i-- {
		if _, err := archive.Restore(ctx, pool, filepath.Join(dir, mans[i].Partition)); err != nil {
			t.Fatal(err)
		}
	}
	if got := snapshot(t, pool); got != before {
		t.Fatalf("after the round trip:\n got %+v\nwant %+v", got, before)
	}
	checkMoney(t, pool)
}

// archivedOrderIDs reads the order ids (the first column) of every month's orders file in dir.
func archivedOrderIDs(t *testing.T, dir string, mans []archive.Manifest) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, m := range mans {
		data, err := os.ReadFile(filepath.Join(dir, m.Partition, "orders.copy"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if line == "" {
				continue
			}
			id, _, _ := strings.Cut(line, "\t")
			seen[id]++
		}
	}
	return seen
}

// TestArchive_CutShortBetweenBatchesResumes: a run cancelled between two batches of a month's
// order removal (its partition already detached and dropped, some of its orders still in the
// database) is finished by the next run before the next month is taken, so every finished order
// lands in exactly one month's files; put back newest first, the ledger, orders, cool-downs and
// list sizes are exactly as before, with no duplicate.
func TestArchive_CutShortBetweenBatchesResumes(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	seedMonths(t, pool)
	before := snapshot(t, pool)
	dir := t.TempDir()
	now := time.Now()
	cut := time.Date(now.Year(), now.Month()-2, 1, 0, 0, 0, 0, time.UTC)
	horizon := now.Sub(cut) - time.Hour
	var finished int64
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM orders WHERE status IN ('COMPLETED', 'CANCELLED') AND updated_at < $1", cut).Scan(&finished); err != nil {
		t.Fatal(err)
	}

	// The first month with orders is cut short after its first batch of 100.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cutIn string
	o := archive.WithBatches(archive.Options{Dir: dir, Horizon: horizon}, 100, func(partition string) {
		if cutIn == "" {
			cutIn = partition
			cancel()
		}
	})
	first, err := archive.Archive(ctx, pool, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut-short run: %v, want context.Canceled", err)
	}
	if cutIn == "" {
		t.Fatal("no batch was removed: nothing was cut short")
	}
	var gone, waitingWork bool
	var left int64
	if err := pool.QueryRow(context.Background(), `SELECT to_regclass($1) IS NULL, to_regclass('archive_orders_' || $1) IS NOT NULL,
		(SELECT count(*) FROM orders WHERE status IN ('COMPLETED', 'CANCELLED') AND updated_at < $2)`, cutIn, cut).
		Scan(&gone, &waitingWork, &left); err != nil {
		t.Fatal(err)
	}
	if !gone || !waitingWork || left == 0 || left >= finished {
		t.Fatalf("after the cut: partition %s gone %v, its work list kept %v, %d of %d finished orders left: not cut between batches",
			cutIn, gone, waitingWork, left, finished)
	}

	// The next run finishes the month cut short, then archives the rest.
	second, err := archive.Archive(context.Background(), pool, archive.WithBatches(archive.Options{Dir: dir, Horizon: horizon}, 100, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(second) == 0 || second[0].Partition != cutIn {
		t.Errorf("the second run's first month is not the one cut short (%s)", cutIn)
	}
	if len(first)+len(second) != 3 {
		t.Errorf("the runs returned %d and %d months, want 3 in all", len(first), len(second))
	}
	// Every month's folder, whatever the runs returned, oldest first.
	folders, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mans []archive.Manifest
	for _, f := range folders {
		data, err := os.ReadFile(filepath.Join(dir, f.Name(), "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m archive.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		mans = append(mans, m)
	}
	if len(mans) != 3 {
		t.Fatalf("%d months' folders, want 3", len(mans))
	}
	ids := archivedOrderIDs(t, dir, mans)
	var twice []string
	for id, n := range ids {
		if n != 1 {
			twice = append(twice, id)
		}
	}
	if len(twice) > 0 {
		t.Errorf("%d orders are in two months' files (e.g. %v)", len(twice), twice[:min(5, len(twice))])
	}
	if int64(len(ids)) != finished {
		t.Fatalf("the archives hold %d orders, %d finished before the horizon", len(ids), finished)
	}
	var work int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_class WHERE starts_with(relname, 'archive_orders_')`).Scan(&work); err != nil || work != 0 {
		t.Fatalf("%d work tables left (%v)", work, err)
	}
	checkMoney(t, pool)

	for i := len(mans) - 1; i >= 0; i-- {
		if _, err := archive.Restore(context.Background(), pool, filepath.Join(dir, mans[i].Partition)); err != nil {
			t.Fatal(err)
		}
	}
	if got := snapshot(t, pool); got != before {
		t.Fatalf("after the round trip:\n got %+v\nwant %+v", got, before)
	}
	checkMoney(t, pool)
}

// TestArchive_RerunsAMonthCutShortBeforeItsDetach: a run that died after writing a month's files
// (and its list of orders) but before the detach removed nothing, so the next run archives that
// month afresh, replacing the files it finds in the month's folder rather than stopping on them,
// and the round trip is still exact.
func TestArchive_RerunsAMonthCutShortBeforeItsDetach(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	seedMonths(t, pool)
	before := snapshot(t, pool)
	dir := t.TempDir()
	now := time.Now()
	cut := time.Date(now.Year(), now.Month()-2, 1, 0, 0, 0, 0, time.UTC)
	horizon := now.Sub(cut) - time.Hour
	first := time.Date(now.Year(), now.Month()-4, 1, 0, 0, 0, 0, time.UTC)
	partition := fmt.Sprintf("order_ledger_p%04d_%02d", first.Year(), first.Month())
	// What the dead run left: the month's folder with its files, and the list of its orders.
	if err := os.MkdirAll(filepath.Join(dir, partition), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "orders.copy", "order_cooldowns.copy", "order_ledger.copy"} {
		if err := os.WriteFile(filepath.Join(dir, partition, name), []byte("from the run that died\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf(`CREATE UNLOGGED TABLE archive_orders_%s AS SELECT id FROM orders WHERE status = 'COMPLETED'`, partition)); err != nil {
		t.Fatal(err)
	}
	mans, err := archive.Archive(ctx, pool, archive.Options{Dir: dir, Horizon: horizon})
	if err != nil {
		t.Fatal(err)
	}
	if len(mans) != 3 {
		t.Fatalf("archived %d months, want 3", len(mans))
	}
	found := false
	for _, m := range mans {
		found = found || m.Partition == partition
	}
	if !found {
		t.Fatalf("%s was not archived again: %+v", partition, mans)
	}
	var work int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE starts_with(relname, 'archive_orders_')`).Scan(&work); err != nil || work != 0 {
		t.Fatalf("%d work tables left (%v)", work, err)
	}
	checkMoney(t, pool)
	for i := len(mans) - 1; i >= 0; i-- {
		if _, err := archive.Restore(ctx, pool, filepath.Join(dir, mans[i].Partition)); err != nil {
			t.Fatal(err)
		}
	}
	if got := snapshot(t, pool); got != before {
		t.Fatalf("after the round trip:\n got %+v\nwant %+v", got, before)
	}
}
