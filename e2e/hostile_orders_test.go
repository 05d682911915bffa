package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestHostileOrders_UnfundedHoardedAndStuck replays issue 22's marketplace abuses against the
// binary (performers may hold 2 orders; an untouched one returns after a few seconds, 3 s on a quiet
// machine, stretched with the load so that the steps before the walk-away finish inside it):
//   - a customer holding 500.00 floods creates of 1,000,000.00: every one is refused, none exists;
//     ten creates of 100.00 at once: exactly the four its balance covers exist;
//   - a performer grabs all four at once: two are taken, two refused with too_many_in_progress;
//     it releases one and may take another; the customer cancels one nobody holds;
//   - the performer walks away: its orders return to WAITING by themselves, and it may not take
//     them straight back (409 retake_cooldown, issue 30);
//   - another performer finishes every open order and each is paid: the money is exact.
func TestHostileOrders_UnfundedHoardedAndStuck(t *testing.T) {
	t.Parallel()
	// The timeout runs from each take, and the takes, the release and the cancels below must all
	// come inside it: at a load of 20 a fixed 1 s ran out before the cancel of a taken order.
	timeout := patience.Bound(3 * time.Second).Round(time.Second)
	s := startServerArgs(t, []string{"-orders-max-held", "2", "-orders-in-progress-timeout", timeout.String()}, orders)
	e := newOrdersEnvAt(t, s.Base(orders))
	ctx := context.Background()
	customer := e.signUp("hostile-customer", ordersapi.Customer)
	hoarder := e.signUp("hostile-hoarder", ordersapi.Performer)
	worker := e.signUp("honest-worker", ordersapi.Performer)

	// parallel runs n calls of f on 16 workers and counts the statuses.
	parallel := func(n int, f func(i int) int) map[int]int {
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		next := make(chan int, n)
		for i := range n {
			next <- i
		}
		close(next)
		for range 16 {
			wg.Go(func() {
				for i := range next {
					st := f(i)
					mu.Lock()
					got[st]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return got
	}
	create := func(price string) func(int) int {
		return func(i int) int {
			r, err := customer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: fmt.Sprintf("job %d", i), Price: json.Number(price)})
			if err != nil {
				t.Error(err)
				return 0
			}
			if r.JSON409 != nil && r.JSON409.Code != "insufficient_funds" {
				t.Errorf("create: 409 %s", r.Body)
			}
			return r.StatusCode()
		}
	}
	if got := parallel(200, create("1000000.00")); got[409] != 200 {
		t.Fatalf("creates of 1,000,000.00 by a customer with 500.00: %v, want 200 × 409", got)
	}
	if got := parallel(10, create("100")); got[201] != 4 || got[409] != 6 {
		t.Fatalf("ten creates of 100.00 (105.00 each) from 500.00: %v, want 4 × 201 and 6 × 409", got)
	}
	mine, err := customer.api.ListUserOrdersWithResponse(ctx, customer.Id, nil)
	if err != nil || mine.JSON200 == nil || mine.JSON200.Page.TotalElements != 4 {
		t.Fatalf("the customer's orders: %v %s; want 4", err, mine.Body)
	}
	ids := make([]int64, 4)
	for i, o := range mine.JSON200.Content {
		ids[i] = o.Id
	}

	// The hoarder grabs everything at once.
	takes := make([]int, 4)
	got := parallel(4, func(i int) int {
		r, err := hoarder.api.TakeOrderWithResponse(ctx, ids[i], nil)
		if err != nil {
			t.Error(err)
			return 0
		}
		if r.JSON409 != nil && r.JSON409.Code != "too_many_in_progress" {
			t.Errorf("take: 409 %s", r.Body)
		}
		takes[i] = r.StatusCode()
		return r.StatusCode()
	})
	if got[200] != 2 || got[409] != 2 {
		t.Fatalf("four takes with a cap of 2: %v, want 2 × 200 and 2 × 409", got)
	}
	var held, free []int64
	for i, st := range takes {
		if st == 200 {
			held = append(held, ids[i])
		} else {
			free = append(free, ids[i])
		}
	}
	if r, err := hoarder.api.ReleaseOrderWithResponse(ctx, held[0], nil); err != nil || r.JSON200 == nil || r.JSON200.Status != ordersapi.WAITING {
		t.Fatalf("release: %v %s", err, r.Body)
	}
	if r, err := hoarder.api.TakeOrderWithResponse(ctx, free[0], nil); err != nil || r.JSON200 == nil {
		t.Fatalf("take after a release: %v %s", err, r.Body)
	}
	held, free = []int64{held[1], free[0]}, []int64{held[0], free[1]}
	if r, err := customer.api.CancelOrderWithResponse(ctx, free[1], nil); err != nil || r.JSON200 == nil || r.JSON200.Status != ordersapi.CANCELLED {
		t.Fatalf("cancel: %v %s", err, r.Body)
	}
	if r, err := customer.api.CancelOrderWithResponse(ctx, held[0], nil); err != nil || r.JSON409 == nil {
		t.Fatalf("cancel of a taken order: %v %s; want 409", err, r.Body)
	}

	// The hoarder walks away: within a few seconds both its orders are WAITING again.
	wait := timeout + patience.Bound(10*time.Second)
	deadline := time.Now().Add(wait)
	for _, id := range held {
		for {
			r, err := customer.api.GetOrderWithResponse(ctx, id)
			if err != nil || r.JSON200 == nil {
				t.Fatalf("GET /orders/%d: %v %s", id, err, r.Body)
			}
			if r.JSON200.Status == ordersapi.WAITING && r.JSON200.Performer == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("order %d still %s %v after its performer left (timeout %v)", id, r.JSON200.Status, wait, timeout)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The hoarder may not take back what expired in its hands.
	if r, err := hoarder.api.TakeOrderWithResponse(ctx, held[0], nil); err != nil || r.JSON409 == nil || r.JSON409.Code != "retake_cooldown" {
		t.Fatalf("the hoarder's retake of an expired order: %v %s; want 409 retake_cooldown", err, r.Body)
	}

	// An honest performer finishes the three open orders one by one; each is paid.
	for _, id := range []int64{held[0], held[1], free[0]} {
		if r, err := worker.api.TakeOrderWithResponse(ctx, id, nil); err != nil || r.JSON200 == nil {
			t.Fatalf("take %d: %v %s", id, err, r.Body)
		}
		if r, err := worker.api.PassOrderWithResponse(ctx, id, nil); err != nil || r.JSON200 == nil {
			t.Fatalf("pass %d: %v %s", id, err, r.Body)
		}
		if r, err := customer.api.AcceptOrderWithResponse(ctx, id, nil); err != nil || r.JSON200 == nil {
			t.Fatalf("accept %d: %v %s", id, err, r.Body)
		}
	}
	wantMoney(t, "customer's balance", customer.balance(t), "185") // 500 - 3 × 105
	wantMoney(t, "worker's balance", worker.balance(t), "600")     // 300 + 3 × 100
	wantMoney(t, "hoarder's balance", hoarder.balance(t), "300")

	if s.dbURL == "" {
		return // a running server elsewhere: its database is not ours to read
	}
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var moves string
	if err := pool.QueryRow(ctx, `SELECT string_agg(kind || '=' || n, ',' ORDER BY kind) FROM (
		SELECT kind, count(*) AS n FROM order_ledger l JOIN order_users u ON u.id = l.user_id
		WHERE u.username IN ($1, $2) AND kind IN ('cancel', 'release', 'expire') GROUP BY kind) k`,
		customer.Username, hoarder.Username).Scan(&moves); err != nil {
		t.Fatal(err)
	}
	if moves != "cancel=1,expire=2,release=1" {
		t.Fatalf("the ledger recorded %s, want cancel=1,expire=2,release=1", moves)
	}
}
