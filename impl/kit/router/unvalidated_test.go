package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
)

// TestSkips_ByOperation: a request skips the validator only when its operation, found by method
// and path template (a literal segment over a parameter, no trailing slash, no empty parameter),
// is listed and its test passes; a listed id the spec lacks stops Group.
func TestSkips_ByOperation(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /things/{id}:
    get: {operationId: getThing, responses: {"200": {description: ok}}}
    delete: {operationId: deleteThing, responses: {"200": {description: ok}}}
  /things/new:
    get: {operationId: newThing, responses: {"200": {description: ok}}}
  /things/{id}/parts:
    get: {operationId: listParts, responses: {"200": {description: ok}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	noQuery := func(r *http.Request) bool { return r.URL.RawQuery == "" }
	skips, err := Skips(spec, map[string]func(*http.Request) bool{"GetThing": noQuery, "ListParts": noQuery})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, target string
		skip           bool
	}{
		{"GET", "/things/7", true},
		{"GET", "/things/7?x=1", false}, // its test refuses it
		{"GET", "/things/new", false},   // newThing, not getThing
		{"DELETE", "/things/7", false},  // not listed
		{"GET", "/things/7/parts", true},
		{"GET", "/things/7/", false},
		{"GET", "/things//parts", false},
		{"GET", "/things", false},
		{"GET", "/other/7", false},
	} {
		if got := skips(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.skip {
			t.Errorf("%s %s: skips %v, want %v", tc.method, tc.target, got, tc.skip)
		}
	}
	err = Group(chi.NewRouter(), Surface{Spec: spec, Unvalidated: map[string]func(*http.Request) bool{"GetThings": noQuery}}, func(chi.Router) {})
	if err == nil || !strings.Contains(err.Error(), "GetThings") {
		t.Errorf("an unknown operation id: %v", err)
	}
}
