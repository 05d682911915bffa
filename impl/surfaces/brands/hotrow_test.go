package brands

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestSubscribe_HotBrandSharesNoRow: two users subscribing to one brand at the same moment, on
// connections that write different counter slots, lock no row in common: while the first holds
// its transaction open, the second subscribes without waiting for a lock (with the count on the
// brand row it would queue behind the first). Both count, and the brand's listed version moved.
func TestSubscribe_HotBrandSharesNoRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(dbtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 32
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var brand string
	var version0 int64
	if err := pool.QueryRow(ctx, `INSERT INTO brands (name) VALUES ('Hot') RETURNING id`).Scan(&brand); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT version FROM brands_counted WHERE id = $1`, brand).Scan(&version0); err != nil {
		t.Fatal(err)
	}
	var userIDs []string
	rows, _ := pool.Query(ctx, `INSERT INTO brand_users (email, name, password_hash)
		SELECT 'u' || g || '@x.test', 'u' || g, 'x' FROM generate_series(1, 2) AS g RETURNING id`)
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		userIDs = append(userIDs, id)
	}
	if rows.Err() != nil || len(userIDs) != 2 {
		t.Fatalf("users: %v %v", userIDs, rows.Err())
	}

	// Two connections of different slots.
	var conns []*pgxpool.Conn
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	slot := func(c *pgxpool.Conn) (s int) {
		_ = c.QueryRow(ctx, "SELECT pg_backend_pid() % 16").Scan(&s)
		return s
	}
	for len(conns) < 17 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if slot(c) != slot(conns[0]) {
			break
		}
	}
	a, b := conns[0], conns[len(conns)-1]
	if slot(a) == slot(b) {
		t.Fatal("17 connections, one slot")
	}
	first, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Rollback(ctx) }()
	second, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.Rollback(ctx) }()
	if _, err := second.Exec(ctx, "SET LOCAL lock_timeout = '50ms'"); err != nil {
		t.Fatal(err)
	}
	for i, tx := range []pgx.Tx{first, second} {
		n, err := db.New(tx).SubscribeBrand(ctx, db.SubscribeBrandParams{UserID: userIDs[i], BrandID: brand})
		if err != nil || n != 1 {
			t.Fatalf("subscription %d: %d rows, %v", i, n, err)
		}
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var count int32
	var version int64
	if err := pool.QueryRow(ctx, `SELECT subscriber_count, version FROM brands_counted WHERE id = $1`, brand).Scan(&count, &version); err != nil {
		t.Fatal(err)
	}
	if count != 2 || version <= version0 {
		t.Fatalf("count %d version %d (was %d), want 2 and a larger version", count, version, version0)
	}
}
