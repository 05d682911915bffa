package orders

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestListQueries_ReadAnIndex: on a seeded table (20,000 orders of 200 customers, 500 of them
// taken by one performer), every page query of db/queries/order_lists.sql reads its list's index
// of 00010_orders.sql (a customer's by price or creation: 00320), never a scan of orders, under the
// plan each list runs with (genericPlan: a generic plan for the new-orders and customer lists),
// and the new-orders pages and a customer's own pages need no sort at all (each sort order has its
// own index), so a customer with a million orders pages them without sorting a million rows.
func TestListQueries_ReadAnIndex(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	var customer, performer int64
	if err := pool.QueryRow(ctx, `
		WITH c AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT 'cust' || g, 'x', 'Customer', 0 FROM generate_series(1, 200) AS g RETURNING id
		), o AS (
			INSERT INTO orders (customer_id, description, price)
			SELECT c.id, 'x', 1 + g * 7919 % 1000 FROM c, generate_series(1, 100) AS g
		), p AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			VALUES ('perf', 'x', 'Performer', 0) RETURNING id
		)
		SELECT (SELECT min(id) FROM c), (SELECT id FROM p)`).Scan(&customer, &performer); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE orders SET status = 'IN PROGRESS', performer_id = $1 WHERE id % 40 = 0`, performer); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE orders`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scope, index string
		owner        int64
		sorted       bool // no Sort node allowed
	}{
		{scopeWaiting, "orders_waiting_", 0, true},
		{scopeCustomer, "orders_customer", customer, true},
		{scopePerformer, "orders_performer", performer, false},
	} {
		for _, f := range []SortField{SortID, SortPrice, SortCreatedAt} {
			for _, desc := range []bool{false, true} {
				sql, ok := listQuery(c.scope, f, desc)
				if !ok {
					t.Fatalf("%s by %s desc=%t: no query", c.scope, f, desc)
				}
				plan := explain(t, pool, sql, genericPlan(c.scope), c.scope, c.owner)
				name := fmt.Sprintf("%s by %s desc=%t", c.scope, f, desc)
				if !strings.Contains(plan, c.index) || strings.Contains(plan, "Seq Scan on orders") {
					t.Errorf("%s reads no %s index:\n%s", name, c.index, plan)
				}
				if c.sorted && strings.Contains(plan, "Sort") {
					t.Errorf("%s sorts:\n%s", name, plan)
				}
			}
		}
	}
}

// explain is the plan of a list query for page 0 of 20, with a generic or a custom plan as the
// list runs it.
func explain(t *testing.T, pool *pgxpool.Pool, sql string, generic bool, scope string, owner int64) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	mode := "force_custom_plan"
	if generic {
		mode = "force_generic_plan"
	}
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "PREPARE page AS "+sql); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DEALLOCATE page; RESET plan_cache_mode") //nolint:errcheck // the connection is the test's
	rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN EXECUTE page('%s', %d, 20, 0)", scope, owner))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
