package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/orders"
)

// TestWriteShare_OneUsersFloodLeavesThePoolToOthers: issue 44's write-pool hog. One customer sends
// 40 creates at once while its first is held in the database (its row locked, as a slow write
// would hold it): with a write share of 1 she has 1 running and 16 waiting, and the other 23 are
// answered at once with the spec's 429 too_many_requests and Retry-After: 1, without touching the
// pool; so are her reads of her own account meanwhile. A bystander's create and reads go through,
// and once the row is free her 17 admitted creates complete.
func TestWriteShare_OneUsersFloodLeavesThePoolToOthers(t *testing.T) {
	t.Parallel()
	e := newEnvLimits(t, orders.Limits{WriteShare: 1})
	hog, other := e.account("hog", "Customer"), e.account("bystander", "Customer")
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM order_users WHERE id = $1 FOR UPDATE", hog.Id); err != nil {
		t.Fatal(err)
	}
	answers := make(chan resp, 40)
	for range 40 {
		go func() { answers <- e.do("POST", "/orders", hog.token, `{"description":"flood","price":"1.00"}`) }()
	}
	refused := 0
	for deadline := time.Now().Add(2 * time.Minute); refused < 23; {
		select {
		case r := <-answers:
			if r.status != http.StatusTooManyRequests || r.errCode(t) != "too_many_requests" || r.header.Get("Retry-After") != "1" {
				t.Fatalf("a create past the hog's share and line: %d %s (Retry-After %q), want 429 too_many_requests, Retry-After 1", r.status, r.body, r.header.Get("Retry-After"))
			}
			refused++
		case <-time.After(time.Until(deadline)):
			t.Fatalf("only %d of 23 creates past the share refused", refused)
		}
	}
	if r := e.do("GET", "/authenticated", hog.token, nil); r.status != http.StatusTooManyRequests {
		t.Errorf("the hog's own account while her places and line are full: %d, want 429", r.status)
	}
	e.createOrder(other, "bystander's order", "2.00")
	e.want(e.do("GET", "/authenticated", other.token, nil), http.StatusOK)
	e.want(e.do("GET", "/users/"+itoa(other.Id)+"/orders", other.token, nil), http.StatusOK)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 17 {
		if r := <-answers; r.status != http.StatusCreated {
			t.Errorf("an admitted create of the hog: %d %s, want 201", r.status, r.body)
		}
	}
}
