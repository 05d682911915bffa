package orders

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// writeKinds are every write of an order: each follows the one lock order of docs/orders.md.
var writeKinds = []string{"create", "cancel", "take", "pass", "release", "accept", "reject", "reject-cancel", "expire", "accept-stale"}

// TestWrites_NoDeadlockOverEveryPair: 40 connections (more backends than the 16 counter slots,
// so several share each slot) run every pair of order writes against each other on the rows of
// two customers and three performers, so each write meets every other on the same users' rows
// and the same slots; then every write kind is run against all the others at once. PostgreSQL
// counts no deadlock in pg_stat_database (nor does the pool's tracer see one), every write kind
// succeeded, and the money and counter invariants hold.
func TestWrites_NoDeadlockOverEveryPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const conns = 40
	url := dbtest.NewURL(t)
	// One connection of its own reads pg_stat_database before and after.
	checkCfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	checkCfg.MaxConns = 1
	check, err := pgxpool.NewWithConfig(ctx, checkCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	before := deadlocks(t, check)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = conns, conns
	conflicts := &pgtx.Conflicts{}
	cfg.ConnConfig.Tracer = conflicts
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// The third customer is the bystander below.
	custIDs, perfIDs := users(t, pool, Customer, 3), users(t, pool, Performer, 3)
	// Enough money for the whole run: each customer may have every order of the run open.
	if _, err := pool.Exec(ctx, `WITH u AS (UPDATE order_users SET balance = balance + 100000000 WHERE user_type = 'Customer' RETURNING id)
		INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', 100000000 FROM u`); err != nil {
		t.Fatal(err)
	}
	var custs, perfs []Principal
	for _, id := range custIDs[:2] {
		custs = append(custs, Principal{ID: id, Type: Customer})
	}
	for _, id := range perfIDs {
		perfs = append(perfs, Principal{ID: id, Type: Performer})
	}
	s := NewService(pool, Config{Limits: Limits{MaxHeld: 1000, RetakeCooldown: time.Millisecond}})
	w := &writer{s: s, custs: custs, perfs: perfs, done: map[string]int{}}
	for range 40 {
		w.do(ctx, t, "create", rand.New(rand.NewPCG(1, 2)))
	}

	pairs := 0
	for i, a := range writeKinds {
		for _, b := range writeKinds[i:] {
			w.run(ctx, t, conns, 80*time.Millisecond, a, b)
			pairs++
		}
	}
	// A bystander, a customer of its own on a connection of its own, creates orders quietly and
	// then while every write runs at once: its median is logged (timing is make bench's, not a
	// test's to assert).
	bystander := NewService(check, Config{})
	by := Principal{ID: custIDs[2], Type: Customer}
	quiet := timeCreates(ctx, t, bystander, by, 20, nil)
	stormDone := make(chan struct{})
	var storm []time.Duration
	go func() { storm = timeCreates(ctx, t, bystander, by, 1000, stormDone); close(stormDone) }()
	w.run(ctx, t, conns, 600*time.Millisecond, writeKinds...)
	stormDone <- struct{}{}
	<-stormDone
	// Each run lasts a fixed time, so on a loaded machine a write that needs another's result (a
	// reject-cancel needs a READY order, an accept-stale an expired one) may not have succeeded
	// yet: the mix runs again until every kind has, within a bound that only ends a broken run.
	for deadline := time.Now().Add(patience.Bound(2 * time.Minute)); w.missing() != "" && time.Now().Before(deadline); {
		w.run(ctx, t, conns, 300*time.Millisecond, writeKinds...)
	}
	pool.Close()
	t.Logf("a bystander's create: median %v quiet, %v while %d connections write (%d creates)",
		median(quiet), median(storm), conns, len(storm))

	after := deadlocks(t, check)
	d, ser := conflicts.Counts()
	t.Logf("%d pairs and all at once on %d connections: %v; serialization failures %d", pairs, conns, w.done, ser)
	if after != before || d != 0 {
		t.Errorf("pg_stat_database.deadlocks %d → %d; the pool saw %d deadlocks", before, after, d)
	}
	if k := w.missing(); k != "" {
		t.Errorf("no %s succeeded: the run did not exercise it", k)
	}
	checkMoney(t, check)
}

// movesFrom is the state each move of one order starts from.
var movesFrom = map[string]Status{"cancel": Waiting, "take": Waiting, "pass": InProgress, "release": InProgress, "accept": Ready, "reject": Ready, "reject-cancel": Ready}

// writer runs order writes chosen by kind on the orders it has created, counting successes.
type writer struct {
	s            *Service
	custs, perfs []Principal
	mu           sync.Mutex
	ids          []int64
	done         map[string]int
}

// run has n goroutines each loop over the writes of kinds, in turn, for d.
func (w *writer) run(ctx context.Context, t *testing.T, n int, d time.Duration, kinds ...string) {
	t.Helper()
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), uint64(len(kinds))))
			for i := g; time.Now().Before(stop) && !t.Failed(); i++ {
				w.do(ctx, t, kinds[i%len(kinds)], rnd)
			}
		})
	}
	wg.Wait()
}

// missing is a write kind of writeKinds that has not succeeded yet, or "".
func (w *writer) missing() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range writeKinds {
		if w.done[k] == 0 {
			return k
		}
	}
	return ""
}

// do runs one write of kind on a random order (a new one for create): expected refusals (the
// order moved meanwhile) are fine, anything else fails the test.
func (w *writer) do(ctx context.Context, t *testing.T, kind string, rnd *rand.Rand) {
	w.mu.Lock()
	id := int64(0)
	if len(w.ids) > 0 {
		id = w.ids[rnd.IntN(len(w.ids))]
	}
	w.mu.Unlock()
	// Mostly an order in the state the move starts from, so each pair really meets; sometimes any.
	if from, ok := movesFrom[kind]; ok && rnd.IntN(4) > 0 {
		_ = w.s.pool.QueryRow(ctx, "SELECT id FROM orders WHERE status = $1 ORDER BY random() LIMIT 1", from).Scan(&id)
	}
	cust, perf := w.custs[rnd.IntN(len(w.custs))], w.perfs[rnd.IntN(len(w.perfs))]
	// The order's own customer and performer, so a move finds the order in its state often.
	if st, err := w.s.q.GetOrderState(ctx, id); err == nil {
		cust = Principal{ID: st.CustomerID, Type: Customer}
		if st.PerformerID.Valid && kind != "take" {
			perf = Principal{ID: st.PerformerID.Int64, Type: Performer}
		}
	}
	var err error
	moved := true
	switch kind {
	case "create":
		var o Order
		o, err = w.s.CreateOrder(ctx, cust, "x", money.Kopecks(1+rnd.IntN(500)))
		if err == nil {
			w.mu.Lock()
			w.ids = append(w.ids, o.ID)
			w.mu.Unlock()
		}
	case "cancel":
		// Cancel rarely, or the run would end with nothing left to move.
		if rnd.IntN(4) == 0 {
			_, err = w.s.Cancel(ctx, cust, id)
		} else {
			_, err = w.s.CreateOrder(ctx, cust, "x", 100)
			moved = false
		}
	case "take":
		_, err = w.s.Take(ctx, perf, id)
	case "pass":
		_, err = w.s.Pass(ctx, perf, id)
	case "release":
		_, err = w.s.Release(ctx, perf, id)
	case "accept":
		_, err = w.s.Accept(ctx, cust, id)
	case "reject":
		_, err = w.s.Reject(ctx, cust, id, false)
	case "reject-cancel":
		_, err = w.s.Reject(ctx, cust, id, true)
	case "expire":
		var n int64
		n, err = w.s.ExpireStale(ctx, time.Millisecond)
		moved = n > 0
	case "accept-stale":
		var n int64
		n, err = w.s.AcceptStale(ctx, time.Millisecond)
		moved = n > 0
	}
	var r *Refusal
	switch {
	case err == nil:
		if moved {
			w.mu.Lock()
			w.done[kind]++
			w.mu.Unlock()
		}
	case errors.As(err, &r) && (errors.Is(err, ErrInvalidState) || errors.Is(err, domainerr.Forbidden) || errors.Is(err, ErrCoolingDown)):
	default:
		t.Errorf("%s of order %d: %v", kind, id, err)
	}
}

// timeCreates times up to n creates of c, one after the other, stopping early when stop is sent on.
func timeCreates(ctx context.Context, t *testing.T, s *Service, c Principal, n int, stop chan struct{}) []time.Duration {
	var took []time.Duration
	for range n {
		select {
		case <-stop:
			return took
		default:
		}
		start := time.Now()
		if _, err := s.CreateOrder(ctx, c, "bystander", 1); err != nil {
			t.Errorf("bystander's create: %v", err)
			return took
		}
		took = append(took, time.Since(start))
	}
	if stop != nil {
		<-stop
	}
	return took
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// deadlocks is pg_stat_database's count for the pool's database once every other backend of it
// has ended (a backend reports its counts when it exits at the latest).
func deadlocks(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	ctx := context.Background()
	for range 200 {
		var others int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&others); err != nil {
			t.Fatal(err)
		}
		if others == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// checkMoney asserts the ledger and counter invariants, as the HTTP race tests' checkLedger does:
// balances are the ledger's sums and never negative, the platform's the commissions, a customer's
// reservation is what its open orders hold, a performer's count is what it holds (IN PROGRESS and
// READY), and each list counter is its list's size.
func checkMoney(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var bad []int64
	rows, err := pool.Query(context.Background(), `
		SELECT (SELECT count(*) FROM order_users WHERE balance < 0 OR reserved > balance)
		UNION ALL SELECT count(*) FROM order_users u WHERE u.balance <> (SELECT coalesce(sum(amount), 0) FROM order_ledger l WHERE l.user_id = u.id)
		UNION ALL SELECT abs((SELECT sum(balance) FROM order_platform_slots) - (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE kind = 'commission'))
		UNION ALL SELECT count(*) FROM order_users u WHERE u.reserved <> (SELECT coalesce(sum(held), 0) FROM orders o
			WHERE o.customer_id = u.id AND o.status IN ('WAITING', 'IN PROGRESS', 'READY'))
		UNION ALL SELECT count(*) FROM order_users u WHERE u.holding <> (SELECT count(*) FROM orders o
			WHERE o.performer_id = u.id AND o.status IN ('IN PROGRESS', 'READY'))
		UNION ALL SELECT count(*) FROM (
			SELECT 'waiting' AS scope, 0::bigint AS owner_id, count(*) AS n FROM orders WHERE status = 'WAITING'
			UNION ALL SELECT 'customer', customer_id, count(*) FROM orders GROUP BY customer_id
			UNION ALL SELECT 'performer', performer_id, count(*) FROM orders WHERE performer_id IS NOT NULL GROUP BY performer_id
		) real FULL JOIN order_list_sizes c USING (scope, owner_id) WHERE coalesce(real.n, 0) <> coalesce(c.n, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, n)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if slices.ContainsFunc(bad, func(n int64) bool { return n != 0 }) {
		t.Fatalf("invariants broken (negative or overdrawn, balance ≠ ledger, platform ≠ commissions, reserved ≠ holds, holding ≠ held orders, counters ≠ lists): %v", bad)
	}
}
