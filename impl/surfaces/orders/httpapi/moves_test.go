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

// outcomes runs each of fs at once (after a common start) and counts the answers: "ok" for a
// 2xx, the error code otherwise.
func (e *env) outcomes(fs ...func() resp) map[string]int {
	e.t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(func() {
			<-start
			r := f()
			key := "ok"
			if r.status >= 300 {
				key = r.errCode(e.t)
			}
			mu.Lock()
			counts[key]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return counts
}

// TestRace_CreatesAndAcceptsOfOneCustomerNeverOverdraw: a customer with 500.00 and three READY
// orders of 50.00 (157.50 reserved) sends ten creates of 100.00 (105.00 each) and the three
// accepts at once. Whatever the interleaving, exactly three creates fit the free 342.50 (an accept
// frees nothing, it pays from the reservation), all three accepts pay, and the three new orders
// are then paid as well: no balance below zero, no order left unpayable.
func TestRace_CreatesAndAcceptsOfOneCustomerNeverOverdraw(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice := e.account("alice", "Customer")
	performers := e.accounts("perf", "Performer", 3)
	var ready []int64
	for i := range 3 {
		ready = append(ready, e.readyOrder(alice, performers[i], "50").Id)
	}
	var fs []func() resp
	for i := range 10 {
		fs = append(fs, func() resp {
			return e.do("POST", "/orders", alice.token, fmt.Sprintf(`{"description":"job %d","price":100}`, i))
		})
	}
	for _, id := range ready {
		fs = append(fs, func() resp { return e.transition(alice, id, "accept") })
	}
	if got := e.outcomes(fs...); got["ok"] != 6 || got["insufficient_funds"] != 7 || len(got) != 2 {
		t.Fatalf("outcomes %v, want 6 ok (3 creates, 3 accepts) and 7 insufficient_funds", got)
	}
	if got := e.balance(alice); got != "342.50" {
		t.Fatalf("balance %s, want 500 - 3 × 52.50 = 342.50", got)
	}
	e.checkLedger()
	waiting := e.list(alice, "/users/"+itoa(alice.Id)+"/orders?size=100")
	for i, o := range waiting.Content {
		if o.Status != ordersapi.WAITING {
			continue
		}
		e.complete(alice, performers[i%3], o.Id)
	}
	if got := e.balance(alice); got != "27.50" {
		t.Fatalf("balance %s, want 342.50 - 3 × 105 = 27.50", got)
	}
	e.checkLedger()
}

// TestOrders_CancelFreesTheReservation: the customer cancels a WAITING order (→ CANCELLED): it
// leaves the new-orders list, stays in the customer's, and its price and commission are free to
// spend again. Nobody else may cancel it, and nothing but a WAITING order is cancelled.
func TestOrders_CancelFreesTheReservation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	bob := e.account("bob", "Performer")
	big := e.createOrder(alice, "big", "400") // 420.00 reserved, 80.00 free
	if r := e.do("POST", "/orders", alice.token, `{"description":"more","price":100}`); r.status != http.StatusConflict {
		t.Fatalf("create beyond the free balance: %d %s", r.status, r.body)
	}
	for _, who := range []account{carol, bob} {
		if r := e.transition(who, big.Id, "cancel"); r.status != http.StatusForbidden || r.errCode(t) != "forbidden" {
			t.Fatalf("%s cancels alice's order: %d %s", who.Username, r.status, r.body)
		}
	}
	if r := e.transition(alice, 999999, "cancel"); r.status != http.StatusNotFound {
		t.Fatalf("cancel of no order: %d %s", r.status, r.body)
	}
	r := e.transition(alice, big.Id, "cancel")
	e.want(r, http.StatusOK)
	var cancelled ordersapi.Order
	r.decode(t, &cancelled)
	if cancelled.Status != ordersapi.CANCELLED || cancelled.Performer != nil {
		t.Fatalf("cancelled: %+v", cancelled)
	}
	if r := e.transition(alice, big.Id, "cancel"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("cancel twice: %d %s", r.status, r.body)
	}
	if r := e.transition(bob, big.Id, "take"); r.status != http.StatusConflict {
		t.Fatalf("take of a cancelled order: %d %s", r.status, r.body)
	}
	if got := e.list(bob, "/orders"); got.Page.TotalElements != 0 || len(got.Content) != 0 {
		t.Fatalf("new orders after the cancel: %+v", got)
	}
	if got := e.list(alice, "/users/"+itoa(alice.Id)+"/orders"); got.Page.TotalElements != 1 || got.Content[0].Status != ordersapi.CANCELLED {
		t.Fatalf("alice's orders after the cancel: %+v", got)
	}
	// The 420.00 is free again: 476.19 + 23.81 = 500.00 fits.
	o := e.createOrder(alice, "instead", "476.19")
	e.want(e.transition(bob, o.Id, "take"), http.StatusOK)
	if r := e.transition(alice, o.Id, "cancel"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("cancel of a taken order: %d %s", r.status, r.body)
	}
	if got := e.balance(alice); got != "500.00" {
		t.Fatalf("a cancel moved money: balance %s", got)
	}
	var kinds int
	if err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM order_ledger WHERE order_id = $1 AND kind = 'cancel' AND user_id = $2 AND amount = 0`, big.Id, alice.Id).Scan(&kinds); err != nil || kinds != 1 {
		t.Fatalf("ledger rows of the cancel: %d %v, want 1", kinds, err)
	}
	e.checkLedger()
}

// TestOrders_ReleaseReturnsTheOrder: the performer hands an IN PROGRESS order back: it is WAITING
// without a performer, on the new-orders list again, off the performer's list, and another
// performer can take it. Only its performer may, and only while it is IN PROGRESS.
func TestOrders_ReleaseReturnsTheOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice := e.account("alice", "Customer")
	bob, dave := e.account("bob", "Performer"), e.account("dave", "Performer")
	o := e.createOrder(alice, "fence", "120.50")
	if r := e.transition(bob, o.Id, "release"); r.status != http.StatusForbidden {
		t.Fatalf("release of a waiting order by a performer not its own: %d %s", r.status, r.body)
	}
	e.want(e.transition(bob, o.Id, "take"), http.StatusOK)
	for _, who := range []account{dave, alice} {
		if r := e.transition(who, o.Id, "release"); r.status != http.StatusForbidden {
			t.Fatalf("%s releases bob's order: %d %s", who.Username, r.status, r.body)
		}
	}
	r := e.transition(bob, o.Id, "release")
	e.want(r, http.StatusOK)
	var released ordersapi.Order
	r.decode(t, &released)
	if released.Status != ordersapi.WAITING || released.Performer != nil {
		t.Fatalf("released: %+v", released)
	}
	if got := e.list(bob, "/users/"+itoa(bob.Id)+"/orders"); got.Page.TotalElements != 0 {
		t.Fatalf("bob's list after the release: %+v", got)
	}
	if got := e.list(dave, "/orders"); got.Page.TotalElements != 1 || got.Content[0].Id != o.Id {
		t.Fatalf("new orders after the release: %+v", got)
	}
	e.want(e.transition(dave, o.Id, "take"), http.StatusOK)
	e.want(e.transition(dave, o.Id, "pass"), http.StatusOK)
	if r := e.transition(dave, o.Id, "release"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("release of a READY order: %d %s", r.status, r.body)
	}
	e.want(e.transition(alice, o.Id, "accept"), http.StatusOK)
	if got := e.balance(dave); got != "420.50" {
		t.Fatalf("dave's balance %s, want 420.50", got)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM order_ledger WHERE order_id = $1 AND kind = 'release' AND user_id = $2`, o.Id, bob.Id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("ledger rows of the release: %d %v, want 1", n, err)
	}
	e.checkLedger()
}

// TestRace_TakeCapPerPerformer: a performer allowed 3 orders takes ten at once: exactly 3 are
// taken, 7 refused with too_many_in_progress. Passing makes no room (a READY order is still held:
// take+pass beyond the cap is refused); a release, a rejection or an acceptance makes room for one.
func TestRace_TakeCapPerPerformer(t *testing.T) {
	t.Parallel()
	e := newEnvLimits(t, orders.Limits{MaxHeld: 3})
	alice, bob, dave := e.account("alice", "Customer"), e.account("bob", "Performer"), e.account("dave", "Performer")
	var ids []int64
	for i := range 10 {
		ids = append(ids, e.createOrder(alice, fmt.Sprintf("job %d", i), "10").Id)
	}
	var fs []func() resp
	for _, id := range ids {
		fs = append(fs, func() resp { return e.transition(bob, id, "take") })
	}
	if got := e.outcomes(fs...); got["ok"] != 3 || got["too_many_in_progress"] != 7 {
		t.Fatalf("outcomes %v, want 3 ok and 7 too_many_in_progress", got)
	}
	e.checkLedger()
	mine := e.list(bob, "/users/"+itoa(bob.Id)+"/orders")
	waiting := e.list(bob, "/orders")
	if mine.Page.TotalElements != 3 || waiting.Page.TotalElements != 7 {
		t.Fatalf("bob holds %d, %d waiting; want 3 and 7", mine.Page.TotalElements, waiting.Page.TotalElements)
	}
	// Another performer is not affected.
	e.want(e.transition(dave, waiting.Content[0].Id, "take"), http.StatusOK)
	atCap := func(what string) {
		t.Helper()
		if r := e.transition(bob, waiting.Content[1].Id, "take"); r.status != http.StatusConflict || r.errCode(t) != "too_many_in_progress" {
			t.Fatalf("take at the cap %s: %d %s", what, r.status, r.body)
		}
	}
	// Passing all three makes no room.
	for _, o := range mine.Content {
		e.want(e.transition(bob, o.Id, "pass"), http.StatusOK)
	}
	atCap("after passing every order")
	// Each answer of the customer, and a release, makes room for one.
	e.want(e.transition(alice, mine.Content[0].Id, "accept"), http.StatusOK)
	e.want(e.transition(bob, waiting.Content[1].Id, "take"), http.StatusOK)
	if r := e.transition(bob, waiting.Content[2].Id, "take"); r.status != http.StatusConflict || r.errCode(t) != "too_many_in_progress" {
		t.Fatalf("take at the cap after one acceptance: %d %s", r.status, r.body)
	}
	e.want(e.transition(alice, mine.Content[1].Id, "reject"), http.StatusOK)
	e.want(e.transition(bob, waiting.Content[2].Id, "take"), http.StatusOK)
	e.want(e.transition(bob, waiting.Content[2].Id, "release"), http.StatusOK)
	e.want(e.transition(bob, waiting.Content[3].Id, "take"), http.StatusOK)
	e.checkLedger()
}

// TestExpireStale_ReturnsUntouchedOrders: an order IN PROGRESS untouched for longer than the
// timeout returns to WAITING (ledger kind 'expire', the performer's place freed); a fresher one
// stays. Four sweeps at once (as on four replicas) move each stale order once.
func TestExpireStale_ReturnsUntouchedOrders(t *testing.T) {
	t.Parallel()
	e := newEnvLimits(t, orders.Limits{MaxHeld: 100})
	ctx := context.Background()
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	var stale []int64
	for i := range 41 {
		o := e.createOrder(alice, fmt.Sprintf("job %d", i), "1")
		e.want(e.transition(bob, o.Id, "take"), http.StatusOK)
		stale = append(stale, o.Id)
	}
	fresh := stale[40]
	stale = stale[:40]
	if _, err := e.pool.Exec(ctx, `UPDATE orders SET updated_at = now() - interval '2 hours' WHERE id = ANY($1)`, stale); err != nil {
		t.Fatal(err)
	}
	svc := orders.NewService(e.pool, orders.Config{})
	var mu sync.Mutex
	var total int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			n, err := svc.ExpireStale(ctx, time.Hour)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 40 {
		t.Fatalf("the sweeps returned %d orders, want 40", total)
	}
	if got := e.list(bob, "/users/"+itoa(bob.Id)+"/orders"); got.Page.TotalElements != 1 || got.Content[0].Id != fresh {
		t.Fatalf("bob's orders after the sweep: %+v", got.Page)
	}
	if got := e.list(bob, "/orders"); got.Page.TotalElements != 40 {
		t.Fatalf("new orders after the sweep: %+v", got.Page)
	}
	var n int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM order_ledger WHERE kind = 'expire' AND user_id = $1`, bob.Id).Scan(&n); err != nil || n != 40 {
		t.Fatalf("expire rows: %d %v", n, err)
	}
	if n, err := svc.ExpireStale(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("a second sweep moved %d (%v)", n, err)
	}
	e.checkLedger()
}
