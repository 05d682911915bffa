package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/kit/idempotency"
)

// keyed sends a JSON POST with an Idempotency-Key through the validating client.
func (e *env) keyed(path, token, key, body string) resp {
	e.t.Helper()
	authz := ""
	if token != "" {
		authz = "Bearer " + token
	}
	return e.keyedAuthz(path, authz, key, body)
}

// keyedAuthz is keyed with the Authorization header as given ("" sends none).
func (e *env) keyedAuthz(path, authz, key, body string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.Header, key)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) count(sql string, args ...any) (n int) {
	e.t.Helper()
	if err := e.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestIdempotency_OrderCreatedOncePerKey: a repeat of POST /orders with the same key and body gets
// the first answer (marked replayed) and creates nothing; eight at once create one order and all
// get its answer; the same key with another body is refused with 422; another customer's same key
// is another key; a refusal (insufficient funds) is not kept, so the key then serves another body.
func TestIdempotency_OrderCreatedOncePerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	orders := func(id int64) int { return e.count("SELECT count(*) FROM orders WHERE customer_id = $1", id) }

	first := e.keyed("/orders", alice.token, "order-1", `{"description":"fence","price":"10.00"}`)
	e.want(first, http.StatusCreated)
	again := e.keyed("/orders", alice.token, "order-1", `{"description":"fence","price":"10.00"}`)
	e.want(again, http.StatusCreated)
	if !bytes.Equal(again.body, first.body) || again.header.Get(idempotency.ReplayedHeader) != "true" {
		t.Fatalf("the repeat answered %s (replayed %q), want the first answer %s", again.body, again.header.Get(idempotency.ReplayedHeader), first.body)
	}
	if n := orders(alice.Id); n != 1 {
		t.Fatalf("%d orders after a repeat, want 1", n)
	}
	other := e.keyed("/orders", alice.token, "order-1", `{"description":"roof","price":"10.00"}`)
	e.want(other, http.StatusUnprocessableEntity)
	if !strings.Contains(string(other.body), idempotency.CodeReused) {
		t.Fatalf("another body under the key: %s", other.body)
	}
	e.want(e.keyed("/orders", carol.token, "order-1", `{"description":"fence","price":"10.00"}`), http.StatusCreated)
	if n := orders(carol.Id); n != 1 {
		t.Fatalf("carol's order under alice's key: %d orders, want 1", n)
	}

	// Eight at once: one runs; each other gets its answer (replayed) or, while it still runs, 409
	// idempotency_key_in_use (the draft's request outstanding), after which a retry gets it.
	var wg sync.WaitGroup
	answers := make([]resp, 8)
	for i := range answers {
		wg.Go(func() {
			answers[i] = e.keyed("/orders", alice.token, "order-2", `{"description":"gate","price":"1.00"}`)
		})
	}
	wg.Wait()
	later := e.keyed("/orders", alice.token, "order-2", `{"description":"gate","price":"1.00"}`)
	e.want(later, http.StatusCreated)
	created := 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusCreated && bytes.Equal(a.body, later.body):
			created++
		case a.status == http.StatusConflict && strings.Contains(string(a.body), idempotency.CodeInUse) && a.header.Get("Retry-After") == "1":
		default:
			t.Fatalf("eight at once: %d %s, want 201 %s or 409 %s", a.status, a.body, later.body, idempotency.CodeInUse)
		}
	}
	if created == 0 {
		t.Fatal("eight at once: none answered 201")
	}
	if n := orders(alice.Id); n != 2 {
		t.Fatalf("%d orders after eight concurrent repeats of a second key, want 2", n)
	}

	e.want(e.keyed("/orders", alice.token, "order-3", `{"description":"x","price":"100000.00"}`), http.StatusConflict)
	e.want(e.keyed("/orders", alice.token, "order-3", `{"description":"x","price":"2.00"}`), http.StatusCreated)
}

// TestIdempotency_UserRegisteredOncePerKey: a repeated registration with its key gets the first
// answer and registers nobody twice (the repeat is not refused as a taken username).
func TestIdempotency_UserRegisteredOncePerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	body := `{"username":"dora","password":"dora-password","userType":"Customer"}`
	first := e.keyed("/users", "", "register-dora", body)
	e.want(first, http.StatusCreated)
	again := e.keyed("/users", "", "register-dora", body)
	e.want(again, http.StatusCreated)
	if !bytes.Equal(first.body, again.body) {
		t.Fatalf("the repeat answered %s, want %s", again.body, first.body)
	}
	if n := e.count("SELECT count(*) FROM order_users WHERE username = 'dora'"); n != 1 {
		t.Fatalf("%d users dora", n)
	}
	// The kept answer is sealed: the table holds no readable copy of it.
	if n := e.count("SELECT count(*) FROM idempotency_keys WHERE position('dora'::bytea IN answer) > 0"); n != 0 {
		t.Fatal("the kept answer is readable in the table")
	}
}

// TestIdempotency_AnyTokenOfTheUserReplays: the key is the user's, not its token's: a retry with
// the user's second token (from a second login), in any spelling of the scheme, gets the first
// answer and creates nothing.
func TestIdempotency_AnyTokenOfTheUserReplays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	alice := e.account("alice", "Customer")
	second := e.login("alice", "alice-password")
	if second == alice.token {
		t.Fatal("setup: the second login gave the same token")
	}
	body := `{"description":"fence","price":"10.00"}`
	first := e.keyed("/orders", alice.token, "k-1", body)
	e.want(first, http.StatusCreated)
	for _, authz := range []string{"Bearer " + second, "bearer  " + second, "BEARER " + second + " "} {
		again := e.keyedAuthz("/orders", authz, "k-1", body)
		e.want(again, http.StatusCreated)
		if !bytes.Equal(again.body, first.body) || again.header.Get(idempotency.ReplayedHeader) != "true" {
			t.Fatalf("retry with %q: %s (replayed %q), want the first answer %s", authz[:7], again.body, again.header.Get(idempotency.ReplayedHeader), first.body)
		}
	}
	if n := e.count("SELECT count(*) FROM orders WHERE customer_id = $1", alice.Id); n != 1 {
		t.Fatalf("%d orders after retries with the second token, want 1", n)
	}
}

// move sends PATCH /orders/{id}/{action} as a with an Idempotency-Key (none when key is "").
func (e *env) move(a account, id int64, action, key string) resp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/orders/%d/%s", e.url, id, action), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// TestIdempotency_MovesRunOncePerKey: every move of an order (take, release, pass, accept,
// reject, cancel) under a key runs once: its repeat gets the first answer, marked replayed, where
// running it again would be refused (a retake within the cool-down, a second acceptance, a
// cancelled order cancelled again) or would move the order again, and the money moves once. The
// key with another order is refused with 422; a refused move keeps nothing, so its key then
// serves the move once it can run.
func TestIdempotency_MovesRunOncePerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	replays := func(key string, first, again resp) {
		t.Helper()
		e.want(first, http.StatusOK)
		e.want(again, http.StatusOK)
		if first.header.Get(idempotency.ReplayedHeader) != "" || again.header.Get(idempotency.ReplayedHeader) != "true" ||
			!bytes.Equal(again.body, first.body) {
			t.Fatalf("%s: the repeat answered %s (replayed %q), want the first answer %s (replayed %q)", key,
				again.body, again.header.Get(idempotency.ReplayedHeader), first.body, first.header.Get(idempotency.ReplayedHeader))
		}
	}
	status := func(id int64) (s string) {
		t.Helper()
		if err := e.pool.QueryRow(context.Background(), "SELECT status FROM orders WHERE id = $1", id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Take, release, take again: the repeats replay, where a second take would meet the cool-down.
	o := e.createOrder(alice, "fence", "10.00")
	takeFirst := e.move(bob, o.Id, "take", "take-1")
	releaseFirst := e.move(bob, o.Id, "release", "release-1")
	replays("take-1", takeFirst, e.move(bob, o.Id, "take", "take-1"))
	replays("release-1", releaseFirst, e.move(bob, o.Id, "release", "release-1"))
	if s := status(o.Id); s != "WAITING" {
		t.Fatalf("after a take and a release, each repeated: %s, want WAITING", s)
	}
	if r := e.move(bob, o.Id, "take", ""); r.status != http.StatusConflict || !strings.Contains(string(r.body), "retake_cooldown") {
		t.Fatalf("an unkeyed retake: %d %s, want 409 retake_cooldown (the repeats moved nothing)", r.status, r.body)
	}
	// The key with another order is another request.
	other := e.createOrder(alice, "roof", "10.00")
	if r := e.move(bob, other.Id, "take", "take-1"); r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), idempotency.CodeReused) {
		t.Fatalf("take-1 for another order: %d %s, want 422 %s", r.status, r.body, idempotency.CodeReused)
	}

	// A refused move keeps nothing: a pass before the take is refused (403: not yet bob's), and
	// the same key passes the order after it.
	if r := e.move(bob, other.Id, "pass", "pass-2"); r.status != http.StatusForbidden {
		t.Fatalf("a pass of a WAITING order: %d %s, want 403", r.status, r.body)
	}
	e.want(e.move(bob, other.Id, "take", ""), http.StatusOK)
	passFirst := e.move(bob, other.Id, "pass", "pass-2")
	replays("pass-2", passFirst, e.move(bob, other.Id, "pass", "pass-2"))

	// Accept pays once.
	acceptFirst := e.move(alice, other.Id, "accept", "accept-2")
	paid, earned := e.balance(alice), e.balance(bob)
	replays("accept-2", acceptFirst, e.move(alice, other.Id, "accept", "accept-2"))
	if a, b := e.balance(alice), e.balance(bob); a != paid || b != earned {
		t.Fatalf("balances after the accept's repeat: alice %s bob %s, want %s and %s", a, b, paid, earned)
	}

	// Reject and cancel: the repeats replay where the order has left the state they start from.
	ready := e.readyOrder(alice, bob, "10.00")
	replays("reject-3", e.move(alice, ready.Id, "reject", "reject-3"), e.move(alice, ready.Id, "reject", "reject-3"))
	if s := status(ready.Id); s != "WAITING" {
		t.Fatalf("after a rejection and its repeat: %s, want WAITING", s)
	}
	replays("cancel-3", e.move(alice, ready.Id, "cancel", "cancel-3"), e.move(alice, ready.Id, "cancel", "cancel-3"))
	if s := status(ready.Id); s != "CANCELLED" {
		t.Fatalf("after a cancel and its repeat: %s, want CANCELLED", s)
	}
	e.checkLedger()
}
