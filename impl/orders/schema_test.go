package orders

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/orders/money"
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

// TestCommission_SQLMatchesGo: the settle statement computes the commission in SQL; it must equal
// money.Commission for every price (checked on all prices up to 2,000.00 and the bounds).
func TestCommission_SQLMatchesGo(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	rows, err := pool.Query(context.Background(), `
		SELECT p, (p * 5 + 50) / 100 FROM (
			SELECT generate_series(1, 200000)::bigint AS p UNION ALL SELECT 100000000 UNION ALL SELECT 99999999
		) AS prices`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var price, commission int64
		if err := rows.Scan(&price, &commission); err != nil {
			t.Fatal(err)
		}
		if got := money.Commission(money.Kopecks(price)); int64(got) != commission {
			t.Fatalf("price %d: SQL commission %d, Go %d", price, commission, got)
		}
		n++
	}
	if rows.Err() != nil || n != 200002 {
		t.Fatalf("%d prices checked: %v", n, rows.Err())
	}
}
