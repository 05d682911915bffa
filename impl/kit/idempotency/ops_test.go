package idempotency

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// TestOperations_AreTheCreatingPOSTs: the specs declare Idempotency-Key on POSTs only, among them
// orders' and brands' that create something a retry must not create twice, and requests match their
// templates. Another surface's keyed POST needs no edit here: router.Group refuses to start a
// surface that declares one without its store.
func TestOperations_AreTheCreatingPOSTs(t *testing.T) {
	var specs []*openapi3.T
	for _, name := range api.Names() {
		spec, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	got := Operations(specs...)
	want := []Operation{{"POST", "/api/subscribe/{id}"}, {"POST", "/api/user/register"}, {"POST", "/orders"}, {"POST", "/users"}}
	for _, op := range want {
		if !slices.Contains(got, op) {
			t.Errorf("operations taking Idempotency-Key: %v, want %v among them", got, op)
		}
	}
	for _, op := range got {
		if op.Method != "POST" {
			t.Errorf("%s %s takes Idempotency-Key: only POSTs create what a retry could create twice", op.Method, op.Path)
		}
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
