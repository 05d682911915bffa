package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestCreateOrder_StatementTimeoutAnswers503: a write whose statement PostgreSQL cancels at the
// role's statement_timeout (SQLSTATE 57014; here the connections' own setting, as `ALTER ROLE ...
// SET statement_timeout` gives every connection) is answered 503 server_busy with Retry-After: 1,
// as the spec documents (the test client validates every answer against it), not 500, and leaves
// nothing behind: the next order goes through once the table is free. The insert is held by a
// lock on the table, taken on another connection.
func TestCreateOrder_StatementTimeoutAnswers503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewURL(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough for every statement of a busy machine's setup, short for a test's wait.
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(patience.Bound(time.Second).Milliseconds(), 10)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e := newEnvPool(t, pool, time.Hour, throttle.Options{})
	alice := e.account("alice", "Customer")
	e.want(e.do("POST", "/orders", alice.token, `{"description":"before","price":1}`), http.StatusCreated)
	var before int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&before); err != nil {
		t.Fatal(err)
	}
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
	r := e.do("POST", "/orders", alice.token, `{"description":"held","price":1}`)
	_ = tx.Rollback(ctx)
	if r.status != http.StatusServiceUnavailable || r.errCode(t) != "server_busy" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a write past the statement timeout: %d %v %s, want 503 server_busy with Retry-After: 1", r.status, r.header, r.body)
	}
	var after int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&after); err != nil || after != before {
		t.Fatalf("%d orders after the refused write, %d before (%v)", after, before, err)
	}
	e.want(e.do("POST", "/orders", alice.token, `{"description":"after","price":1}`), http.StatusCreated)
}
