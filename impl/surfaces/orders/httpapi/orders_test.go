package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
)

func TestUsers_Register(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)

	// 201: starting balances by role; the password is never returned.
	r := e.do("POST", "/users", "", map[string]string{"username": "Alice", "password": "alice-password", "userType": "Customer"})
	e.want(r, http.StatusCreated)
	if strings.Contains(string(r.body), "password") {
		t.Fatalf("response reveals the password: %s", r.body)
	}
	var alice ordersapi.User
	r.decode(t, &alice)
	if alice.Username != "Alice" || alice.UserType != ordersapi.Customer || alice.Balance.String() != "500.00" {
		t.Fatalf("customer: %+v", alice)
	}
	bob := e.register("bob", "bob-password", "Performer")
	if bob.UserType != ordersapi.Performer || bob.Balance.String() != "300.00" {
		t.Fatalf("performer: %+v", bob)
	}

	// 409: names are unique ignoring case.
	r = e.do("POST", "/users", "", map[string]string{"username": "ALICE", "password": "another-password", "userType": "Performer"})
	e.want(r, http.StatusConflict)
	if r.errCode(t) != "username_taken" {
		t.Fatalf("code %s", r.body)
	}

	// 400 with field details.
	for name, body := range map[string]string{
		"short name":    `{"username":"ab","password":"long-enough","userType":"Customer"}`,
		"long name":     `{"username":"` + strings.Repeat("a", 33) + `","password":"long-enough","userType":"Customer"}`,
		"bad chars":     `{"username":"a b<c>","password":"long-enough","userType":"Customer"}`,
		"short pw":      `{"username":"carol","password":"short","userType":"Customer"}`,
		"bad role":      `{"username":"carol","password":"long-enough","userType":"Admin"}`,
		"missing role":  `{"username":"carol","password":"long-enough"}`,
		"extra field":   `{"username":"carol","password":"long-enough","userType":"Customer","balance":1000000}`,
		"not json":      `{"username":`,
		"wrong type":    `{"username":5,"password":"long-enough","userType":"Customer"}`,
		"empty payload": `{}`,
	} {
		r := e.do("POST", "/users", "", body)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, body %s", name, r.status, r.body)
			continue
		}
		var er ordersapi.Error
		r.decode(t, &er)
		if er.Code != "validation_failed" || (name != "not json" && (er.Details == nil || len(*er.Details) == 0)) {
			t.Errorf("%s: %s", name, r.body)
		}
	}

	// GET /authenticated returns the caller.
	tok := e.login("alice", "alice-password") // any letter case logs in
	r = e.do("GET", "/authenticated", tok, nil)
	e.want(r, http.StatusOK)
	var me ordersapi.User
	r.decode(t, &me)
	if me.Id != alice.Id || me.Balance.String() != "500.00" {
		t.Fatalf("authenticated: %+v", me)
	}
}

func TestBearer_Refusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	for name, tc := range map[string]struct{ header, challenge string }{
		"missing":      {"", `Bearer realm="orders"`},
		"other scheme": {"Basic YTpi", `Bearer realm="orders"`},
		"unknown":      {"Bearer " + strings.Repeat("x", 43), `Bearer realm="orders", error="invalid_token"`},
		"malformed":    {"Bearer nope", `Bearer realm="orders", error="invalid_token"`},
	} {
		req, _ := http.NewRequest("GET", e.url+"/authenticated", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		res, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%s: %d %q", name, res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
	}
	// Every protected route refuses before looking at the input.
	for _, path := range []string{"GET /orders", "POST /orders", "GET /users/1/orders", "PATCH /orders/1/take", "PATCH /orders/1/pass", "PATCH /orders/1/accept", "PATCH /orders/x/take"} {
		m, p, _ := strings.Cut(path, " ")
		r := e.do(m, p, "", nil)
		if r.status != http.StatusUnauthorized || r.errCode(t) != "unauthorized" {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
}

func TestBearer_TokenExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3*time.Second)
	a := e.account("alice", "Customer")
	e.want(e.do("GET", "/authenticated", a.token, nil), http.StatusOK)
	time.Sleep(3100 * time.Millisecond)
	r := e.do("GET", "/authenticated", a.token, nil)
	if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != `Bearer realm="orders", error="invalid_token"` {
		t.Fatalf("expired token: %d %v", r.status, r.header)
	}
}

func TestOrders_Lifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	bob, dave := e.account("bob", "Performer"), e.account("dave", "Performer")

	// Create: customers only, validated price and description.
	o := e.createOrder(alice, "Paint the fence", "120.5")
	if o.Status != ordersapi.WAITING || o.Price.String() != "120.50" || o.CustomerId != alice.Id || o.Performer != nil {
		t.Fatalf("created: %+v", o)
	}
	r := e.do("POST", "/orders", bob.token, `{"description":"x","price":1}`)
	if r.status != http.StatusForbidden || r.errCode(t) != "forbidden" {
		t.Fatalf("performer creates: %d %s", r.status, r.body)
	}
	for name, body := range map[string]string{
		"three decimals": `{"description":"x","price":1.005}`,
		"zero":           `{"description":"x","price":0}`,
		"negative":       `{"description":"x","price":-3}`,
		"too big":        `{"description":"x","price":1000000.01}`,
		"huge exponent":  `{"description":"x","price":1e99999}`,
		"tiny exponent":  `{"description":"x","price":1e-99999}`,
		"blank":          `{"description":"   ","price":12}`,
		"empty":          `{"description":"","price":12}`,
		"long":           `{"description":"` + strings.Repeat("y", 2001) + `","price":12}`,
		"missing price":  `{"description":"x"}`,
		"NUL in text":    `{"description":"a\u0000b","price":12}`,
	} {
		r := e.do("POST", "/orders", alice.token, body)
		if r.status != http.StatusBadRequest || r.errCode(t) != "validation_failed" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	e.fund(carol, 1_050_000) // the largest price and its commission
	big := e.createOrder(carol, "Big job", "1000000")
	if big.Price.String() != "1000000.00" {
		t.Fatalf("max price: %s", big.Price)
	}

	// Take: performers only, WAITING only.
	if r := e.transition(alice, o.Id, "take"); r.status != http.StatusForbidden {
		t.Fatalf("customer takes: %d", r.status)
	}
	r = e.transition(bob, o.Id, "take")
	e.want(r, http.StatusOK)
	var taken ordersapi.Order
	r.decode(t, &taken)
	if taken.Status != ordersapi.INPROGRESS || taken.Performer == nil || taken.Performer.Id != bob.Id || taken.Performer.Username != "bob" {
		t.Fatalf("taken: %+v", taken)
	}
	if r := e.transition(dave, o.Id, "take"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("take twice: %d %s", r.status, r.body)
	}
	if r := e.transition(bob, 999999, "take"); r.status != http.StatusNotFound || r.errCode(t) != "not_found" {
		t.Fatalf("unknown order: %d %s", r.status, r.body)
	}

	// Accept before READY is a state conflict.
	if r := e.transition(alice, o.Id, "accept"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("early accept: %d %s", r.status, r.body)
	}

	// Pass: only the order's performer.
	if r := e.transition(dave, o.Id, "pass"); r.status != http.StatusForbidden {
		t.Fatalf("other performer passes: %d %s", r.status, r.body)
	}
	if r := e.transition(alice, o.Id, "pass"); r.status != http.StatusForbidden {
		t.Fatalf("customer passes: %d %s", r.status, r.body)
	}
	if r := e.transition(bob, 999999, "pass"); r.status != http.StatusNotFound {
		t.Fatalf("pass unknown: %d %s", r.status, r.body)
	}
	r = e.transition(bob, o.Id, "pass")
	e.want(r, http.StatusOK)
	var ready ordersapi.Order
	r.decode(t, &ready)
	if ready.Status != ordersapi.READY {
		t.Fatalf("ready: %+v", ready)
	}
	if r := e.transition(bob, o.Id, "pass"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("pass twice: %d %s", r.status, r.body)
	}

	// Accept: only the order's customer; pays price + 5% (6.025 rounds up to 6.03).
	if r := e.transition(carol, o.Id, "accept"); r.status != http.StatusForbidden {
		t.Fatalf("other customer accepts: %d", r.status)
	}
	if r := e.transition(bob, o.Id, "accept"); r.status != http.StatusForbidden {
		t.Fatalf("performer accepts: %d", r.status)
	}
	if r := e.transition(alice, 999999, "accept"); r.status != http.StatusNotFound {
		t.Fatalf("accept unknown: %d", r.status)
	}
	r = e.transition(alice, o.Id, "accept")
	e.want(r, http.StatusOK)
	var done ordersapi.Order
	r.decode(t, &done)
	if done.Status != ordersapi.COMPLETED || done.Performer == nil || done.Performer.Id != bob.Id {
		t.Fatalf("completed: %+v", done)
	}
	if got := e.balance(alice); got != "373.47" {
		t.Fatalf("customer balance %s, want 500 - 120.50 - 6.03 = 373.47", got)
	}
	if got := e.balance(bob); got != "420.50" {
		t.Fatalf("performer balance %s, want 300 + 120.50 = 420.50", got)
	}
	if r := e.transition(alice, o.Id, "accept"); r.status != http.StatusConflict || r.errCode(t) != "invalid_state" {
		t.Fatalf("accept twice: %d %s", r.status, r.body)
	}
	// Ids outside the spec (not an integer, below 1) are refused as invalid, not looked up.
	for _, c := range []struct {
		who  account
		path string
	}{
		{bob, "PATCH /orders/abc/take"}, {bob, "PATCH /orders/0/take"}, {bob, "PATCH /orders/-1/pass"},
		{alice, "PATCH /orders/0/accept"}, {alice, "GET /users/0/orders"}, {bob, "GET /users/-3/orders"},
	} {
		m, p, _ := strings.Cut(c.path, " ")
		if r := e.do(m, p, c.who.token, nil); r.status != http.StatusBadRequest || r.errCode(t) != "validation_failed" {
			t.Errorf("%s: %d %s", c.path, r.status, r.body)
		}
	}
	e.checkLedger()
}

// TestOrders_InsufficientFunds: an order reserves its price and commission when it is created, so
// the create the free balance cannot cover is the one refused, and what was created can be paid.
func TestOrders_InsufficientFunds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	// 480.00 + 24.00 commission = 504.00 > 500.00.
	r := e.do("POST", "/orders", alice.token, `{"description":"work","price":480}`)
	if r.status != http.StatusConflict || r.errCode(t) != "insufficient_funds" {
		t.Fatalf("create without funds: %d %s", r.status, r.body)
	}
	if !strings.Contains(string(r.body), "504.00") || !strings.Contains(string(r.body), "500.00 of the balance 500.00 is free") {
		t.Errorf("message does not state the cost and the free balance: %s", r.body)
	}
	if page := e.list(alice, fmt.Sprintf("/users/%d/orders", alice.Id)); len(page.Content) != 0 {
		t.Fatalf("a refused create left an order: %+v", page.Content)
	}
	// 300.00 + 15.00 reserved leaves 185.00 free: 180.00 + 9.00 no longer fits, 176.19 + 8.81 does.
	first := e.createOrder(alice, "first", "300")
	r = e.do("POST", "/orders", alice.token, `{"description":"work","price":180}`)
	if r.status != http.StatusConflict || !strings.Contains(string(r.body), "185.00 of the balance 500.00 is free, 315.00 being reserved") {
		t.Fatalf("create beyond the free balance: %d %s", r.status, r.body)
	}
	second := e.createOrder(alice, "second", "176.19")
	// Both are paid, in any order: the whole balance may be spent, never more.
	for _, o := range []ordersapi.Order{second, first} {
		e.complete(alice, bob, o.Id)
	}
	if got := e.balance(alice); got != "0.00" {
		t.Fatalf("balance %s, want 0.00", got)
	}
	e.checkLedger()
}

func (e *env) list(a account, path string) ordersapi.OrderPage {
	e.t.Helper()
	r := e.do("GET", path, a.token, nil)
	e.want(r, http.StatusOK)
	var p ordersapi.OrderPage
	r.decode(e.t, &p)
	return p
}

func TestOrders_ListsAndPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	bob, dave := e.account("bob", "Performer"), e.account("dave", "Performer")
	var ids []int64
	for i := range 25 {
		ids = append(ids, e.createOrder(alice, fmt.Sprintf("job %d", i), fmt.Sprintf("%d.%02d", 10+i%7, i)).Id)
	}
	e.createOrder(carol, "carol's job", "5")

	p := e.list(bob, "/orders")
	if len(p.Content) != 20 || p.Page.TotalElements != 26 || p.Page.TotalPages != 2 || p.Page.Number != 0 || p.Page.Size != 20 {
		t.Fatalf("page 0: %d items, %+v", len(p.Content), p.Page)
	}
	if p.Content[0].Id != ids[0] || p.Content[19].Id != ids[19] {
		t.Fatal("default sort is not id ascending")
	}
	p = e.list(bob, "/orders?page=1")
	if len(p.Content) != 6 || p.Page.Number != 1 {
		t.Fatalf("page 1: %d items, %+v", len(p.Content), p.Page)
	}
	p = e.list(bob, "/orders?page=9&size=5")
	if len(p.Content) != 0 || p.Page.TotalElements != 26 || p.Page.TotalPages != 6 {
		t.Fatalf("page past the end: %+v", p)
	}
	p = e.list(bob, "/orders?sort=price,desc&size=100")
	for i := 1; i < len(p.Content); i++ {
		a, b := p.Content[i-1], p.Content[i]
		if a.Price.String() != b.Price.String() && mustFloat(a.Price.String()) < mustFloat(b.Price.String()) {
			t.Fatalf("not sorted by price desc at %d: %s < %s", i, a.Price, b.Price)
		}
	}
	p = e.list(bob, "/orders?sort=id,desc&size=3")
	if p.Content[0].Id <= p.Content[1].Id {
		t.Fatal("id,desc not descending")
	}
	e.list(bob, "/orders?sort=createdAt")
	for _, q := range []string{"sort=customerId", "sort=price,up", "sort=password", "size=101", "size=0", "page=-1", "page=x"} {
		r := e.do("GET", "/orders?"+q, bob.token, nil)
		if r.status != http.StatusBadRequest || r.errCode(t) != "validation_failed" {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}

	// Customers never see the new-orders list nor others' lists.
	if r := e.do("GET", "/orders", alice.token, nil); r.status != http.StatusForbidden {
		t.Fatalf("customer lists new orders: %d", r.status)
	}
	for _, pair := range [][2]account{{alice, carol}, {carol, alice}, {bob, alice}, {alice, bob}, {bob, dave}} {
		r := e.do("GET", fmt.Sprintf("/users/%d/orders", pair[1].Id), pair[0].token, nil)
		if r.status != http.StatusForbidden || r.errCode(t) != "forbidden" {
			t.Fatalf("%s lists %s's orders: %d", pair[0].Username, pair[1].Username, r.status)
		}
	}
	if r := e.do("GET", "/users/987654/orders", alice.token, nil); r.status != http.StatusForbidden {
		t.Fatalf("unknown user's orders: %d", r.status)
	}

	// Own lists: a customer's published orders, a performer's taken ones; counts follow transitions.
	p = e.list(carol, fmt.Sprintf("/users/%d/orders", carol.Id))
	if p.Page.TotalElements != 1 || p.Content[0].CustomerId != carol.Id {
		t.Fatalf("carol's orders: %+v", p)
	}
	for _, id := range ids[:3] {
		e.want(e.transition(bob, id, "take"), http.StatusOK)
	}
	e.want(e.transition(dave, ids[3], "take"), http.StatusOK)
	p = e.list(bob, fmt.Sprintf("/users/%d/orders", bob.Id))
	if p.Page.TotalElements != 3 || len(p.Content) != 3 || p.Content[0].Performer.Id != bob.Id {
		t.Fatalf("bob's orders: %+v", p.Page)
	}
	p = e.list(bob, "/orders?size=1")
	if p.Page.TotalElements != 22 || p.Page.TotalPages != 22 {
		t.Fatalf("new orders after 4 takes: %+v", p.Page)
	}
	p = e.list(alice, fmt.Sprintf("/users/%d/orders?size=100", alice.Id))
	if p.Page.TotalElements != 25 || len(p.Content) != 25 {
		t.Fatalf("alice's orders after takes: %+v", p.Page)
	}
	// The customer's list names each order's performer.
	names := map[int64]string{}
	for _, o := range p.Content {
		if o.Performer != nil {
			names[o.Id] = o.Performer.Username
		}
	}
	if len(names) != 4 || names[ids[0]] != "bob" || names[ids[3]] != "dave" {
		t.Fatalf("performers in alice's list: %v", names)
	}
	p = e.list(dave, fmt.Sprintf("/users/%d/orders", dave.Id))
	if p.Page.TotalElements != 1 {
		t.Fatalf("dave's orders: %+v", p.Page)
	}
	e.checkLedger()
}

func mustFloat(s string) float64 {
	var f float64
	fmt.Sscanf(s, "%g", &f)
	return f
}
