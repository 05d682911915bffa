package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// The moves issue 30 added so that every order can always move: the customer's rejection, the
// performer's cool-down, the acceptance of READY orders left unanswered, and a commission that
// never rounds to zero.

// TestReject_SendsAReadyOrderBack: the customer's rejection makes a READY order WAITING without
// its performer, nobody paid, the reservation kept; its performer's take of it is refused with
// retake_cooldown (saying until when) while another performer may take it; only the customer may
// reject, and only a READY order.
func TestReject_SendsAReadyOrderBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	bob, dave := e.account("bob", "Performer"), e.account("dave", "Performer")
	o := e.readyOrder(alice, bob, "100")
	if r := e.transition(carol, o.Id, "reject"); r.status != http.StatusForbidden {
		t.Fatalf("another customer's reject: %d %s", r.status, r.body)
	}
	if r := e.transition(bob, o.Id, "reject"); r.status != http.StatusForbidden {
		t.Fatalf("the performer's reject: %d %s", r.status, r.body)
	}
	r := e.transition(alice, o.Id, "reject")
	e.want(r, http.StatusOK)
	var got ordersapi.Order
	r.decode(t, &got)
	if got.Status != ordersapi.WAITING || got.Performer != nil {
		t.Fatalf("rejected order: %+v", got)
	}
	if r := e.transition(alice, o.Id, "reject"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("reject of a WAITING order: %d %s", r.status, r.body)
	}
	if b := e.balance(alice); b != "500.00" {
		t.Fatalf("customer balance %s after a rejection, want 500.00 (nothing paid)", b)
	}
	if b := e.balance(bob); b != "300.00" {
		t.Fatalf("performer balance %s after a rejection, want 300.00 (nothing paid)", b)
	}
	// Still reserved: 500.00 - 105.00 is free, so an order of 400.00 (420.00) does not fit.
	if r := e.do("POST", "/orders", alice.token, `{"description":"x","price":400}`); r.status != http.StatusConflict {
		t.Fatalf("create beyond the free balance after a rejection: %d %s", r.status, r.body)
	}
	if p := e.list(bob, "/users/"+itoa(bob.Id)+"/orders"); p.Page.TotalElements != 0 {
		t.Fatalf("the performer's list still counts %d orders", p.Page.TotalElements)
	}
	r = e.transition(bob, o.Id, "take")
	if r.status != http.StatusConflict || r.errCode(t) != "retake_cooldown" {
		t.Fatalf("the rejected performer's take: %d %s", r.status, r.body)
	}
	e.want(e.transition(dave, o.Id, "take"), http.StatusOK)
	e.want(e.transition(dave, o.Id, "pass"), http.StatusOK)
	e.want(e.transition(alice, o.Id, "accept"), http.StatusOK)
	if b := e.balance(dave); b != "400.00" {
		t.Fatalf("the second performer's balance %s, want 400.00", b)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM order_ledger WHERE order_id = $1 AND kind = 'reject' AND user_id = $2`, o.Id, bob.Id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("ledger rows of the rejection: %d %v, want 1", n, err)
	}
	e.checkLedger()
}

// TestCooldown_ReleaseAndExpiry: a performer who released an order, or let it expire, may not take
// it again within the cool-down (409 retake_cooldown) and may once it has passed; the sweep of
// ended cool-downs leaves running ones.
func TestCooldown_ReleaseAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnvLimits(t, orders.Limits{RetakeCooldown: time.Hour})
	ctx := context.Background()
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	released, expired := e.createOrder(alice, "released", "1"), e.createOrder(alice, "expired", "1")
	e.want(e.transition(bob, released.Id, "take"), http.StatusOK)
	e.want(e.transition(bob, released.Id, "release"), http.StatusOK)
	e.want(e.transition(bob, expired.Id, "take"), http.StatusOK)
	if _, err := e.pool.Exec(ctx, `UPDATE orders SET updated_at = now() - interval '2 hours' WHERE id = $1`, expired.Id); err != nil {
		t.Fatal(err)
	}
	svc := orders.NewService(e.pool, orders.Config{Limits: orders.Limits{RetakeCooldown: time.Hour}})
	if n, err := svc.ExpireStale(ctx, time.Hour); err != nil || n != 1 {
		t.Fatalf("expired %d (%v), want 1", n, err)
	}
	for _, id := range []int64{released.Id, expired.Id} {
		if r := e.transition(bob, id, "take"); r.status != http.StatusConflict || r.errCode(t) != "retake_cooldown" {
			t.Fatalf("retake of order %d: %d %s", id, r.status, r.body)
		}
	}
	if n, err := svc.SweepCooldowns(ctx); err != nil || n != 0 {
		t.Fatalf("swept %d running cool-downs (%v)", n, err)
	}
	// The cool-down of the released order ends.
	if _, err := e.pool.Exec(ctx, `UPDATE order_cooldowns SET until = now() - interval '1 second' WHERE order_id = $1`, released.Id); err != nil {
		t.Fatal(err)
	}
	e.want(e.transition(bob, released.Id, "take"), http.StatusOK)
	if n, err := svc.SweepCooldowns(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d ended cool-downs (%v), want 1", n, err)
	}
	e.checkLedger()
}

// TestAcceptStale_PaysReadyOrdersLeftUnanswered: an order READY for longer than the timeout is
// accepted and paid as its customer would (the performer's place freed); a fresher one stays
// READY; sweeps on several replicas at once pay each order once.
func TestAcceptStale_PaysReadyOrdersLeftUnanswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	ctx := context.Background()
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	old1, old2, fresh := e.readyOrder(alice, bob, "10"), e.readyOrder(alice, bob, "0.09"), e.readyOrder(alice, bob, "1")
	if _, err := e.pool.Exec(ctx, `UPDATE orders SET updated_at = now() - interval '15 days' WHERE id = ANY($1)`, []int64{old1.Id, old2.Id}); err != nil {
		t.Fatal(err)
	}
	svc := orders.NewService(e.pool, orders.Config{})
	var mu sync.Mutex
	var total int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			n, err := svc.AcceptStale(ctx, orders.DefaultReadyTimeout)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 2 {
		t.Fatalf("the sweeps paid %d orders, want 2", total)
	}
	for id, want := range map[int64]ordersapi.OrderStatus{old1.Id: ordersapi.COMPLETED, old2.Id: ordersapi.COMPLETED, fresh.Id: ordersapi.READY} {
		r := e.do("GET", "/orders/"+itoa(id), alice.token, nil)
		var o ordersapi.Order
		r.decode(t, &o)
		if o.Status != want {
			t.Errorf("order %d is %s, want %s", id, o.Status, want)
		}
	}
	// 500.00 - (10.00 + 0.50) - (0.09 + 0.01) = 489.40; the fresh order stays reserved, unpaid.
	if b := e.balance(alice); b != "489.40" {
		t.Fatalf("customer balance %s, want 489.40", b)
	}
	if b := e.balance(bob); b != "310.09" {
		t.Fatalf("performer balance %s, want 310.09", b)
	}
	e.checkLedger()
}

// TestCommission_NeverZero: the commission is 5% rounded up to the kopeck, reserved at creation
// and charged at acceptance alike: a 0.09 order costs its customer 0.10 (the platform gets 0.01,
// where half-up rounding gave it nothing), a 100.00 order still 105.00; ten more 0.09 orders pay
// the platform 0.10.
func TestCommission_NeverZero(t *testing.T) {
	t.Parallel()
	e := newEnvLimits(t, orders.Limits{MaxHeld: 100})
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	platform := func() int64 {
		t.Helper()
		var n int64
		if err := e.pool.QueryRow(context.Background(), "SELECT sum(balance) FROM order_platform_slots").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	o := e.createOrder(alice, "tiny", "0.09")
	// Reserved 0.10: of 500.00, 499.90 is free, so 475.99 + 23.80 = 499.79 fits and 476.10 + 23.81 does not.
	if r := e.do("POST", "/orders", alice.token, `{"description":"x","price":"476.10"}`); r.status != http.StatusConflict {
		t.Fatalf("a create beyond what the 0.09 order left free: %d %s", r.status, r.body)
	}
	e.complete(alice, bob, o.Id)
	if b := e.balance(alice); b != "499.90" {
		t.Fatalf("customer balance %s after a 0.09 order, want 499.90", b)
	}
	if got := platform(); got != 1 {
		t.Fatalf("platform %d kopecks after a 0.09 order, want 1", got)
	}
	e.complete(alice, bob, e.createOrder(alice, "round", "100").Id)
	if b := e.balance(alice); b != "394.90" {
		t.Fatalf("customer balance %s after a 100.00 order, want 394.90 (105.00 more)", b)
	}
	for i := range 10 {
		e.complete(alice, bob, e.createOrder(alice, fmt.Sprintf("tiny %d", i), "0.09").Id)
	}
	if got := platform(); got != 1+500+10 {
		t.Fatalf("platform %d kopecks, want 5.11 (0.01 + 5.00 + 10 × 0.01)", got)
	}
	e.checkLedger()
}
