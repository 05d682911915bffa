package orders

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// twoSlots returns two transactions on connections that write different counter slots, the second
// refusing to wait for any row lock (lock_timeout), so a statement of it that needs a row the first
// holds fails instead of queueing.
func twoSlots(t *testing.T, pool *pgxpool.Pool) (first, second pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	var conns []*pgxpool.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Release()
		}
	})
	slotOf := func(c *pgxpool.Conn) int {
		var s int
		if err := c.QueryRow(ctx, "SELECT order_counter_slot()").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for len(conns) < 17 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if len(conns) > 1 && slotOf(c) != slotOf(conns[0]) {
			break
		}
	}
	a, b := conns[0], conns[len(conns)-1]
	if slotOf(a) == slotOf(b) {
		t.Fatal("17 connections, one counter slot")
	}
	first, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err = b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Rollback(ctx); _ = second.Rollback(ctx) })
	if _, err := second.Exec(ctx, "SET LOCAL lock_timeout = '50ms'"); err != nil {
		t.Fatal(err)
	}
	return first, second
}

func users(t *testing.T, pool *pgxpool.Pool, kind UserType, n int) []int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT lower($1) || g, 'x', $1, 100000 FROM generate_series(1, $2) AS g RETURNING id, balance
		), l AS (INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', balance FROM u)
		SELECT id FROM u ORDER BY id`, string(kind), n)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestWrites_ShareNoRow: two customers creating, two performers taking and two customers accepting
// at the same moment, on two connections, lock no row in common: while the first of each pair holds
// its transaction open, the second completes without waiting for a lock. (With one counter row
// for the new-orders list, the second create and take would queue behind the first.)
func TestWrites_ShareNoRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Room for the three pairs of connections held open below.
	cfg, err := pgxpool.ParseConfig(dbtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 64
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	custs, perfs := users(t, pool, Customer, 2), users(t, pool, Performer, 2)
	q := db.New(pool)
	create := func(q *db.Queries, cust int64) int64 {
		t.Helper()
		row, err := q.CreateOrder(ctx, db.CreateOrderParams{CustomerID: cust, Description: "x", Price: 1000})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		return row.ID
	}

	first, second := twoSlots(t, pool)
	create(db.New(first), custs[0])
	create(db.New(second), custs[1])
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	o1, o2 := create(q, custs[0]), create(q, custs[1])
	first, second = twoSlots(t, pool)
	take := func(tx pgx.Tx, id, perf int64) {
		t.Helper()
		if r, err := db.New(tx).TakeOrder(ctx, db.TakeOrderParams{OrderID: id, PerformerID: perf, MaxHeld: DefaultMaxHeld}); err != nil || r.Outcome != "taken" {
			t.Fatalf("take: %+v %v", r, err)
		}
	}
	take(first, o1, perfs[0])
	take(second, o2, perfs[1])
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// Two READY orders whose ids fall in different platform slots (id modulo 16).
	for _, o := range []struct{ id, perf int64 }{{o1, perfs[0]}, {o2, perfs[1]}} {
		if _, err := q.PassOrder(ctx, db.PassOrderParams{ID: o.id, PerformerID: pgtype.Int8{Int64: o.perf, Valid: true}}); err != nil {
			t.Fatal(err)
		}
	}
	if o1%16 == o2%16 {
		t.Fatalf("orders %d and %d share a platform slot", o1, o2)
	}
	first, second = twoSlots(t, pool)
	accept := func(tx pgx.Tx, id, cust int64) {
		t.Helper()
		r, err := db.New(tx).AcceptOrder(ctx, db.AcceptOrderParams{OrderID: id, CallerID: cust})
		if err != nil || r.Outcome != "completed" {
			t.Fatalf("accept: %+v %v", r, err)
		}
	}
	accept(first, o1, custs[0])
	accept(second, o2, custs[1])
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// The totals read through the slots are exact.
	for _, c := range []struct {
		scope string
		owner int64
		want  int64
	}{{scopeWaiting, 0, 2}, {scopeCustomer, custs[0], 2}, {scopeCustomer, custs[1], 2}, {scopePerformer, perfs[0], 1}} {
		n, err := q.OrderListTotal(ctx, db.OrderListTotalParams{Scope: c.scope, OwnerID: c.owner})
		if err != nil || n != c.want {
			t.Errorf("%s/%d: size %d (%v), want %d", c.scope, c.owner, n, err, c.want)
		}
	}
}
