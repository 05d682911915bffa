package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestListNewOrders_DeepPagesRefused: a page starting more than orders.MaxOffset rows into the
// list is refused before any query, naming the deepest page of its size; the deepest one is served.
func TestListNewOrders_DeepPagesRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	bob := e.account("bob", "Performer")
	r := e.do("GET", "/orders?page=9999&size=100&sort=price,desc", bob.token, nil)
	e.want(r, http.StatusBadRequest)
	type detail struct {
		In, Field, Code string
		Limit           json.Number
	}
	var body struct{ Details []detail }
	r.decode(t, &body)
	if len(body.Details) != 1 || body.Details[0] != (detail{"query", "page", "too_large", "100"}) {
		t.Fatalf("details %+v, want query page too_large 100", body.Details)
	}
	e.want(e.do("GET", "/orders?page=100&size=100&sort=price,desc", bob.token, nil), http.StatusOK)
	e.want(e.do("GET", "/orders?page=501", bob.token, nil), http.StatusBadRequest)
}

// TestListNewOrders_SlowPageAnswers503: a page whose query runs past Limits.ListTimeout is
// cancelled by PostgreSQL (statement_timeout) and answered 503 server_busy with Retry-After, not
// 500, and the connection goes back to the pool usable. The query is held here by a lock on the
// table (taken on another connection), the surest way to make it slow; the API's pool has one
// connection, whose statements are prepared by a first page, so the query waits at execution,
// where the timeout applies (a statement's first preparation on a connection runs before it).
func TestListNewOrders_SlowPageAnswers503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewURL(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e := newEnvWith(t, pool, withLimits(orders.Limits{ListTimeout: 100 * time.Millisecond}))
	bob := e.account("bob", "Performer")
	e.want(e.do("GET", "/orders", bob.token, nil), http.StatusOK)
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.do("GET", "/orders", bob.token, nil)
	took := time.Since(start)
	_ = tx.Rollback(ctx)
	if r.status != http.StatusServiceUnavailable || r.errCode(t) != "server_busy" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a page past its time: %d %v %s, want 503 server_busy with Retry-After: 1", r.status, r.header, r.body)
	}
	if took > 5*time.Second {
		t.Fatalf("the refusal took %s, the timeout is 100 ms", took)
	}
	e.want(e.do("GET", "/orders", bob.token, nil), http.StatusOK) // the connection still works
}
