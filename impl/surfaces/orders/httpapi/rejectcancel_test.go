package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
)

// TestOrders_RejectCancelLeavesNoWindow: PATCH /orders/{id}/reject?cancel=true takes a READY order
// straight to CANCELLED (issue 44: a reject then a cancel let a second performer re-take the order
// in between). The performer's place under the cap is free, the customer's reservation is free,
// the order is on no one's new-orders list and cannot be taken; the ledger records the rejection
// and the cancel, and the books balance. Only the order's customer may, and only from READY;
// cancel=false is a plain reject.
func TestOrders_RejectCancelLeavesNoWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, bob, dave := e.account("alice", "Customer"), e.account("bob", "Performer"), e.account("dave", "Performer")
	o := e.readyOrder(alice, bob, "400") // 420.00 reserved
	if r := e.do("PATCH", "/orders/"+itoa(o.Id)+"/reject?cancel=true", bob.token, nil); r.status != http.StatusForbidden {
		t.Fatalf("the performer rejects and cancels: %d %s", r.status, r.body)
	}
	waiting := e.createOrder(alice, "waiting", "1")
	if r := e.do("PATCH", "/orders/"+itoa(waiting.Id)+"/reject?cancel=true", alice.token, nil); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("reject and cancel of a WAITING order: %d %s", r.status, r.body)
	}
	r := e.do("PATCH", "/orders/"+itoa(o.Id)+"/reject?cancel=true", alice.token, nil)
	e.want(r, http.StatusOK)
	var got ordersapi.Order
	r.decode(t, &got)
	if got.Status != ordersapi.CANCELLED || got.Performer != nil {
		t.Fatalf("rejected and cancelled: %+v", got)
	}
	for _, p := range []account{bob, dave} {
		if r := e.transition(p, o.Id, "take"); r.status != http.StatusConflict {
			t.Errorf("%s takes the rejected and cancelled order: %d %s", p.Username, r.status, r.body)
		}
	}
	if l := e.list(dave, "/orders"); l.Page.TotalElements != 1 { // only "waiting"
		t.Errorf("new orders after the reject and cancel: %+v", l)
	}
	if l := e.list(bob, "/users/"+itoa(bob.Id)+"/orders"); l.Page.TotalElements != 0 {
		t.Errorf("bob's orders after the reject and cancel: %+v", l)
	}
	// The 420.00 is free again (only 78.95 would be free otherwise).
	e.createOrder(alice, "instead", "400")
	// bob's place under the cap is free: he may hold MaxHeld others (here: take one more).
	e.want(e.transition(bob, waiting.Id, "take"), http.StatusOK)
	var kinds []string
	rows, err := e.pool.Query(context.Background(), `SELECT kind || ':' || user_id FROM order_ledger WHERE order_id = $1 AND kind IN ('reject', 'cancel') ORDER BY kind`, o.Id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, k)
	}
	if want := []string{"cancel:" + itoa(alice.Id), "reject:" + itoa(bob.Id)}; len(kinds) != 2 || kinds[0] != want[0] || kinds[1] != want[1] {
		t.Errorf("ledger rows: %v, want %v", kinds, want)
	}
	if got := e.balance(alice); got != "500.00" {
		t.Errorf("a reject and cancel moved money: balance %s", got)
	}
	// cancel=false is a plain reject: WAITING again.
	o2 := e.readyOrder(alice, dave, "1")
	r = e.do("PATCH", "/orders/"+itoa(o2.Id)+"/reject?cancel=false", alice.token, nil)
	e.want(r, http.StatusOK)
	r.decode(t, &got)
	if got.Status != ordersapi.WAITING {
		t.Errorf("reject with cancel=false: %+v", got)
	}
	e.checkLedger()
}
