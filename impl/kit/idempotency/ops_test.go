package idempotency

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// TestOperations_AreTheWritesThatCannotRepeat: the specs declare Idempotency-Key on writes only
// (never a GET or HEAD), among them orders' and brands' creating POSTs, the moves of an order and
// a brand's deletion, each of which a second run would refuse or do again; requests match their
// templates. Another surface's keyed operation needs no edit here: router.Group refuses to start a
// surface that declares one without its store.
func TestOperations_AreTheWritesThatCannotRepeat(t *testing.T) {
	var specs []*openapi3.T
	for _, name := range api.Names() {
		spec, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	got := Operations(specs...)
	want := []Operation{{"POST", "/api/subscribe/{id}"}, {"POST", "/api/user/register"}, {"DELETE", "/api/brand/{id}"},
		{"POST", "/orders"}, {"POST", "/users"}}
	for _, action := range []string{"take", "release", "pass", "cancel", "reject", "accept"} {
		want = append(want, Operation{"PATCH", "/orders/{id}/" + action})
	}
	for _, op := range want {
		if !slices.Contains(got, op) {
			t.Errorf("operations taking Idempotency-Key: %v, want %v among them", got, op)
		}
	}
	for _, op := range got {
		if op.Method == "GET" || op.Method == "HEAD" {
			t.Errorf("%s %s takes Idempotency-Key: a read needs none", op.Method, op.Path)
		}
	}
	if _, ok := match(got, httptest.NewRequest("PATCH", "/orders/3/take", nil)); !ok {
		t.Error("PATCH /orders/3/take does not match")
	}
	for path, wantOK := range map[string]bool{"/api/subscribe/655e1f2a9c0d1e4b5a6c7d8e": true, "/api/subscribe/": false,
		"/orders": true, "/orders/1": false, "/users": true, "/api/user/register": true} {
		if _, ok := match(got, httptest.NewRequest("POST", path, nil)); ok != wantOK {
			t.Errorf("POST %s matches: %v, want %v", path, ok, wantOK)
		}
	}
	if _, ok := match(got, httptest.NewRequest("GET", "/orders", nil)); ok {
		t.Error("GET /orders matches")
	}
}
