package orders

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestList_BehindTransactionPoolerKeepsItsTimeout: the list pages read through PgBouncer in
// transaction mode (Debian's, default settings; pgx describing statements, as the server runs behind
// a pooler) are the pages read directly, totals included, for every list; a page held past
// Limits.ListTimeout (a lock taken on a direct connection) is cancelled, ErrListTooSlow, and the next
// page is served; and the page's settings (statement timeout, generic plan) stay with its own
// implicit transaction, so a server connection the pooler hands on carries neither.
func TestList_BehindTransactionPoolerKeepsItsTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := dbtest.NewURL(t)
	cfg, err := pgxpool.ParseConfig(dbtest.Bouncer(t, direct))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	cfg.MaxConns = 1
	pooled, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pooled.Close)
	directPool, err := pgxpool.New(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(directPool.Close)

	var customer, performer Principal
	customer.Type, performer.Type = Customer, Performer
	if err := directPool.QueryRow(ctx, `
		WITH c AS (
			INSERT INTO order_users (username, password_hash, user_type, balance) VALUES ('cust', 'x', 'Customer', 0) RETURNING id
		), p AS (
			INSERT INTO order_users (username, password_hash, user_type, balance) VALUES ('perf', 'x', 'Performer', 0) RETURNING id
		), o AS (
			INSERT INTO orders (customer_id, performer_id, description, price, status)
			SELECT c.id, CASE WHEN g % 5 = 0 THEN p.id END, 'order ' || g, 100 + g, CASE WHEN g % 5 = 0 THEN 'IN PROGRESS' ELSE 'WAITING' END
			FROM c, p, generate_series(1, 60) AS g RETURNING customer_id, performer_id
		)
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT x.scope, x.owner_id, 0, count(*) FROM o, LATERAL (VALUES
			(CASE WHEN o.performer_id IS NULL THEN 'waiting' ELSE 'performer' END, coalesce(o.performer_id, 0)),
			('customer', o.customer_id)) AS x(scope, owner_id)
		GROUP BY x.scope, x.owner_id
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
		RETURNING (SELECT id FROM c), (SELECT id FROM p)`).Scan(&customer.ID, &performer.ID); err != nil {
		t.Fatal(err)
	}
	limits := Limits{ListTimeout: 200 * time.Millisecond}
	through, straight := NewService(pooled, Config{Limits: limits}), NewService(directPool, Config{Limits: limits})
	type read func(context.Context, *Service) (PageOf[Order], error)
	pr := PageRequest{Number: 1, Size: 10, Sort: SortPrice, Desc: true}
	reads := map[string]read{
		"new orders": func(ctx context.Context, s *Service) (PageOf[Order], error) { return s.ListWaiting(ctx, performer, pr) },
		"customer's own": func(ctx context.Context, s *Service) (PageOf[Order], error) {
			return s.ListOwn(ctx, customer, customer.ID, pr)
		},
		"performer's own": func(ctx context.Context, s *Service) (PageOf[Order], error) {
			return s.ListOwn(ctx, performer, performer.ID, PageRequest{Size: 20, Sort: SortID})
		},
		"past the last one": func(ctx context.Context, s *Service) (PageOf[Order], error) {
			return s.ListWaiting(ctx, performer, PageRequest{Number: 9, Size: 10, Sort: SortID})
		},
	}
	for name, r := range reads {
		want, err := r(ctx, straight)
		if err != nil {
			t.Fatalf("%s, read directly: %v", name, err)
		}
		for range 3 { // the first describes the statements; the next run them as every later read
			got, err := r(ctx, through)
			if err != nil {
				t.Fatalf("%s through the pooler: %v", name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s through the pooler:\n%+v\nwant (read directly)\n%+v", name, got, want)
			}
		}
	}

	// No setting outlives its page: the pooler's server connection (one client connection, so the
	// one it just served) shows the defaults to the next client.
	var timeout, planMode string
	if err := pooled.QueryRow(ctx, "SELECT current_setting('statement_timeout'), current_setting('plan_cache_mode')").Scan(&timeout, &planMode); err != nil {
		t.Fatal(err)
	}
	if timeout != "0" || planMode != "auto" {
		t.Fatalf("after the pages, the pooled connection has statement_timeout %q and plan_cache_mode %q, want the defaults", timeout, planMode)
	}

	// A page held by a lock past the timeout is cancelled by PostgreSQL, through the pooler.
	locker, err := directPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locker.Exec(ctx, "LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	held, cancel := context.WithTimeout(ctx, 20*time.Second) // a page the timeout missed fails here
	defer cancel()
	_, err = reads["new orders"](held, through)
	took := time.Since(start)
	_ = locker.Rollback(ctx)
	if !errors.Is(err, ErrListTooSlow) {
		t.Fatalf("a page held past its timeout through the pooler: %v, want ErrListTooSlow", err)
	}
	if took > 5*time.Second {
		t.Fatalf("the refusal took %s, the timeout is %s", took, limits.ListTimeout)
	}
	if _, err := reads["new orders"](ctx, through); err != nil {
		t.Fatalf("the page after the cancelled one: %v", err)
	}
}
