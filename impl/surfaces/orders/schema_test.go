package orders

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestSchema_GuardsMoney: whatever code runs against it, the database refuses a negative balance,
// a non-positive price and a waiting order with a performer.
func TestSchema_GuardsMoney(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	var cust int64
	if err := pool.QueryRow(ctx, `INSERT INTO order_users (username, password_hash, user_type, balance)
		VALUES ('alice', 'x', 'Customer', 100) RETURNING id`).Scan(&cust); err != nil {
		t.Fatal(err)
	}
	for name, stmt := range map[string]string{
		"negative balance":         `UPDATE order_users SET balance = balance - 101 WHERE id = $1`,
		"zero price":               `INSERT INTO orders (customer_id, description, price) VALUES ($1, 'x', 0)`,
		"price over the cap":       `INSERT INTO orders (customer_id, description, price) VALUES ($1, 'x', 100000001)`,
		"waiting with a performer": `INSERT INTO orders (customer_id, performer_id, description, price) VALUES ($1, $1, 'x', 5)`,
		"ready without performer":  `INSERT INTO orders (customer_id, description, price, status) VALUES ($1, 'x', 5, 'READY')`,
		"unknown status":           `INSERT INTO orders (customer_id, description, price, status) VALUES ($1, 'x', 5, 'LOST')`,
		"negative platform":        `UPDATE order_platform_slots SET balance = -1 WHERE slot = 0 AND $1::bigint > 0`,
	} {
		_, err := pool.Exec(ctx, stmt, cust)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: %v, want a check violation", name, err)
		}
	}
}

// TestCommission_RoundsUp: order_commission, the one statement of the platform's cut, is 5% of
// the price rounded up to the kopeck, so no paid order pays less than 0.01; 100.00 still pays
// exactly 5.00.
func TestCommission_RoundsUp(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	for _, tc := range []struct{ price, want int64 }{
		{1, 1},       // 0.05 kopeck: the least commission, 0.01
		{9, 1},       // 0.45: a 0.09 order costs 0.10
		{10, 1},      // 0.5
		{20, 1},      // exact
		{21, 2},      // 1.05
		{30, 2},      // 1.5
		{12050, 603}, // 602.5
		{10000, 500}, // exact: 100.00 pays 5.00
		{100_000_000, 5_000_000},
	} {
		var got int64
		if err := pool.QueryRow(context.Background(), "SELECT order_commission($1)", tc.price).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("order_commission(%d) = %d, want %d", tc.price, got, tc.want)
		}
	}
}
