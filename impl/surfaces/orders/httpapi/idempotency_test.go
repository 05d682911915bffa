package httpapi_test

import (
	"bytes"
	"context"
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
