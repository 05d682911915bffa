package orders

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// beforePartitioning is the last migration before the ledger was partitioned (00340).
const beforePartitioning = 330

// conversionRows is the ledger rows TestLedgerConversion_WhileServing converts: 60,000 in `make
// test` (seconds), TRIAD_LEDGER_CONVERSION_ROWS in `make test-ledger-conversion` (1,000,000).
func conversionRows(t *testing.T) int {
	if v := os.Getenv("TRIAD_LEDGER_CONVERSION_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 3 {
			t.Fatalf("TRIAD_LEDGER_CONVERSION_ROWS=%q: want a row count", v)
		}
		return n
	}
	return 60_000
}

// TestLedgerConversion_WhileServing: a database at the schema before 00340, holding half a year of
// completed orders (their ledger rows spread over the months), is converted to the partitioned
// ledger while customers and performers keep creating, taking, passing and accepting orders
// through the Service. No write fails, no ledger row is lost (the seeded rows plus three per
// acceptance), the money and list invariants hold (checkMoney), and the rows sit in their
// months' partitions with the old table gone.
func TestLedgerConversion_WhileServing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.NewEmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 12
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := migrate.UpTo(ctx, pool, beforePartitioning); err != nil {
		t.Fatal(err)
	}
	rows := conversionRows(t)
	seeded := seedHistory(t, pool, rows/3)

	const pairs = 4
	custIDs, perfIDs := users(t, pool, Customer, pairs), users(t, pool, Performer, pairs)
	// Money for as many orders as a slow conversion lets the writers complete (a grant each).
	if _, err := pool.Exec(ctx, `WITH u AS (UPDATE order_users SET balance = balance + 100000000 WHERE id = ANY($1) RETURNING id)
		INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', 100000000 FROM u`, custIDs); err != nil {
		t.Fatal(err)
	}
	s := NewService(pool, Config{Limits: Limits{MaxHeld: 1000}})
	var accepts atomic.Int64
	var firstRound, wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, pairs)
	rounds := make([]atomic.Int64, pairs)
	for i := range pairs {
		firstRound.Add(1)
		wg.Go(func() {
			c, p := Principal{ID: custIDs[i], Type: Customer}, Principal{ID: perfIDs[i], Type: Performer}
			for n := 0; ; n++ {
				if err := lifecycle(ctx, s, c, p); err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", i, n, err)
					if n == 0 {
						firstRound.Done()
					}
					return
				}
				accepts.Add(1)
				rounds[i].Add(1)
				if n == 0 {
					firstRound.Done()
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}
	firstRound.Wait() // every writer is writing before the conversion starts
	start := time.Now()
	if err := migrate.Up(ctx, pool); err != nil {
		t.Fatalf("converting the ledger: %v", err)
	}
	took := time.Since(start)
	during := accepts.Load()
	// Every writer completes another order after the conversion, on the new table.
	after := make([]int64, pairs)
	for i := range pairs {
		after[i] = rounds[i].Load()
	}
	for i := 0; i < pairs; i++ {
		for rounds[i].Load() <= after[i]+1 && len(errs) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("converted %d ledger rows in %v while %d writers completed %d orders (%d by the end of the conversion)",
		seeded, took.Round(time.Millisecond), pairs, accepts.Load(), during)

	var partitioned, oldLeft bool
	var total, parts int64
	if err := pool.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'order_ledger'::regclass),
		to_regclass('order_ledger_old') IS NOT NULL,
		(SELECT count(*) FROM order_ledger),
		(SELECT count(DISTINCT tableoid) FROM order_ledger)`).Scan(&partitioned, &oldLeft, &total, &parts); err != nil {
		t.Fatal(err)
	}
	// Each writer's users had a grant (users), its customer a second, and each acceptance wrote
	// three rows.
	want := seeded + 3*pairs + 3*accepts.Load()
	if !partitioned || oldLeft || total != want || parts < 6 {
		t.Fatalf("after the conversion: partitioned %v, old table left %v, %d ledger rows (want %d) in %d partitions (want the 6 months' at least)",
			partitioned, oldLeft, total, want, parts)
	}
	checkMoney(t, pool)
}

// lifecycle runs one order of customer c through performer p: created, taken, passed, accepted.
func lifecycle(ctx context.Context, s *Service, c, p Principal) error {
	o, err := s.CreateOrder(ctx, c, "conversion order", money.Kopecks(100))
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if _, err := s.Take(ctx, p, o.ID); err != nil {
		return fmt.Errorf("take: %w", err)
	}
	if _, err := s.Pass(ctx, p, o.ID); err != nil {
		return fmt.Errorf("pass: %w", err)
	}
	if _, err := s.Accept(ctx, c, o.ID); err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	return nil
}

// seedHistory inserts n completed orders of 50 customers and 50 performers, created over the last
// 183 days, with the ledger rows, balances, platform slots and list counters their lifecycle
// would have left, and returns the ledger rows it inserted (grants included).
func seedHistory(t *testing.T, pool *pgxpool.Pool, n int) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, fmt.Sprintf(`
		CREATE TEMP TABLE seed_orders AS SELECT g::bigint AS g FROM generate_series(1, %d) AS g;
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT 'hist-' || k || g, 'x', CASE k WHEN 'c' THEN 'Customer' ELSE 'Performer' END,
			       CASE k WHEN 'c' THEN 1000000000 ELSE 0 END
			FROM generate_series(1, 50) AS g, (VALUES ('c'), ('p')) AS v(k) RETURNING id, balance
		)
		INSERT INTO order_ledger (user_id, kind, amount, created_at)
		SELECT id, 'grant', balance, now() - interval '184 days' FROM u WHERE balance > 0;
		CREATE TEMP TABLE seeded (id bigint, customer_id bigint, performer_id bigint, price bigint, held bigint, updated_at timestamptz);
		WITH users AS (
			SELECT array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Customer') AS c,
			       array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Performer') AS p
			FROM order_users WHERE username LIKE 'hist-%%'
		), o AS (
			INSERT INTO orders (customer_id, performer_id, description, price, held, status, created_at, updated_at)
			SELECT users.c[1 + g %% 50], users.p[1 + (g * 7) %% 50], 'history ' || g, 100 + g %% 900,
			       100 + g %% 900 + order_commission(100 + g %% 900), 'COMPLETED', t, t + interval '1 hour'
			FROM users, seed_orders, LATERAL (SELECT now() - interval '183 days' + make_interval(secs => (g * 104729) %% 15811200)) AS ts(t)
			RETURNING id, customer_id, performer_id, price, held, updated_at
		)
		INSERT INTO seeded SELECT * FROM o;
		INSERT INTO order_ledger (user_id, order_id, kind, amount, created_at)
		SELECT r.user_id, s.id, r.kind, r.amount, s.updated_at FROM seeded s,
		LATERAL (VALUES (s.customer_id, 'payment', -s.held), (s.performer_id, 'earning', s.price),
		                (NULL::bigint, 'commission', s.held - s.price)) AS r(user_id, kind, amount);
		UPDATE order_users u SET balance = u.balance + d.amount
		FROM (SELECT customer_id AS id, -sum(held) AS amount FROM seeded GROUP BY 1
		      UNION ALL SELECT performer_id, sum(price) FROM seeded GROUP BY 1) d WHERE u.id = d.id;
		UPDATE order_platform_slots p SET balance = p.balance + d.amount
		FROM (SELECT id %% 16 AS slot, sum(held - price) AS amount FROM seeded GROUP BY 1) d WHERE p.slot = d.slot;
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT s.scope, s.owner_id, 0, count(*) FROM seeded,
		LATERAL (VALUES ('customer', customer_id), ('performer', performer_id)) AS s(scope, owner_id) GROUP BY 1, 2
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n;
		ANALYZE`, n)); err != nil {
		t.Fatal(err)
	}
	var rows int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM order_ledger").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	checkMoney(t, pool)
	return rows
}
