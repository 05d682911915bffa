package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
)

// skipsOf is router.Skips over the orders spec and unvalidated: whether a request skips the
// validator, decided as the surface decides it.
func skipsOf(t *testing.T, spec *openapi3.T) func(*http.Request) bool {
	t.Helper()
	skips, err := router.Skips(spec, unvalidated)
	if err != nil {
		t.Fatal(err)
	}
	return skips
}

// TestUnvalidated_TheValidatorAccepts: every read unvalidated lets past the spec validator is one
// the validator accepts, over every combination of ids, page parameters and extra query below,
// well formed or not; and the common reads do go past it (else the speed-up is gone).
func TestUnvalidated_TheValidatorAccepts(t *testing.T) {
	t.Parallel()
	spec, err := ordersapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	skips := skipsOf(t, spec)
	var reached bool
	mw, err := web.Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	validator := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	accepts := func(target string) bool {
		reached = false
		validator.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
		return reached
	}
	for _, target := range []string{"/authenticated", "/orders", "/orders?page=0&size=20", "/orders/17",
		"/users/3/orders?sort=price,desc&page=2&size=100", "/orders?sort=createdAt%2Cdesc", "/users/9223372036854775807/orders"} {
		if !skips(httptest.NewRequest(http.MethodGet, target, nil)) {
			t.Errorf("GET %s goes through the validator; it is a well-formed read", target)
		}
	}
	ids := []string{"1", "17", "0", "007", "-1", "+1", "1.5", "x", "", "9223372036854775807", "9223372036854775808", "1%32"}
	pages := []string{"", "page=0", "page=10000", "page=10001", "page=-1", "page=01", "page=x", "page=1e3", "page=", "page", "page=+1"}
	sizes := []string{"", "size=1", "size=100", "size=0", "size=101", "size=020", "size=20&size=20"}
	sorts := []string{"", "sort=id", "sort=price,desc", "sort=price%2Cdesc", "sort=createdAt,asc", "sort=name", "sort=price,up", "sort=PRICE", "sort=%zz"}
	extras := []string{"", "colour=red", "page=1"}
	var targets []string
	for _, id := range ids {
		targets = append(targets, "/orders/"+id, "/orders/"+id+"?page=1", "/authenticated?"+id)
	}
	for _, base := range []string{"/orders", "/users/1/orders", "/users/0/orders", "/users/x/orders", "/users/1/2/orders"} {
		for _, p := range pages {
			for _, s := range sizes {
				for _, o := range sorts {
					for _, x := range extras {
						var q []string
						for _, part := range []string{p, s, o, x} {
							if part != "" {
								q = append(q, part)
							}
						}
						targets = append(targets, base+"?"+strings.Join(q, "&"))
					}
				}
			}
		}
	}
	skipped := 0
	for _, target := range targets {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if !skips(r) {
			continue
		}
		skipped++
		if !accepts(target) {
			t.Errorf("GET %s skips the validator, which refuses it", target)
		}
	}
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader("{}")),
		httptest.NewRequest(http.MethodGet, "/orders", strings.NewReader("{}")),
		httptest.NewRequest(http.MethodGet, "/orders/1/take", nil),
	} {
		if skips(r) {
			t.Errorf("%s %s skips the validator", r.Method, r.URL)
		}
	}
	t.Logf("%d of %d reads skip the validator", skipped, len(targets))
}

// TestUnvalidated_MovesTheValidatorAccepts: the moves unvalidated lets past the spec validator
// are exactly the spec's PATCH /orders/{id}/{action} operations, each taking no body and no
// parameter but the id, an optional query parameter and the optional Idempotency-Key header, and
// every request it lets past, over ids, actions, queries, keys and bodies well formed or not, is
// one the validator accepts; a request with a key is always validated.
func TestUnvalidated_MovesTheValidatorAccepts(t *testing.T) {
	t.Parallel()
	spec, err := ordersapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	skips := skipsOf(t, spec)
	for path, item := range spec.Paths.Map() {
		if !strings.HasPrefix(path, "/orders/{id}/") {
			continue
		}
		if item.Patch == nil || len(item.Operations()) != 1 {
			t.Errorf("%s: a move is a PATCH and nothing else", path)
			continue
		}
		op := item.Patch
		others := 0 // parameters besides the id that a request without a query still has
		for _, p := range append(slices.Clone(op.Parameters), item.Parameters...) {
			// An optional query parameter (reject's cancel) or Idempotency-Key sends its request
			// to the validator: wellFormedMove takes no query and no key.
			optional := !p.Value.Required && (p.Value.In == "query" || p.Value.In == "header" && p.Value.Name == idempotency.Header)
			if p.Value.Name != "id" && !optional {
				others++
			}
		}
		if op.RequestBody != nil || others != 0 {
			t.Errorf("PATCH %s takes a body or a parameter besides the id: the validator must see it", path)
		}
		if _, ok := unvalidated[web.GeneratedOperationID(op.OperationID)]; !ok {
			t.Errorf("PATCH %s (%s) goes through the validator: add it to unvalidated", path, op.OperationID)
		}
	}

	var reached bool
	mw, err := web.Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	validator := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	ids := []string{"1", "17", "0", "007", "-1", "x", "", "9223372036854775807", "9223372036854775808", "1%32"}
	actions := []string{"take", "pass", "accept", "cancel", "release", "reject", "ready", "TAKE", "take/", "", "take/1"}
	skipped, total := 0, 0
	for _, id := range ids {
		for _, action := range actions {
			for _, query := range []string{"", "?", "?page=1"} {
				for _, body := range []string{"", "{}"} {
					for _, key := range []string{"", "k-1", "a key"} {
						for _, method := range []string{http.MethodPatch, http.MethodPost, http.MethodGet} {
							target := "/orders/" + id + "/" + action + query
							r := httptest.NewRequest(method, target, strings.NewReader(body))
							if body == "" {
								r = httptest.NewRequest(method, target, nil)
							}
							if key != "" {
								r.Header.Set(idempotency.Header, key)
							}
							total++
							if !skips(r) {
								continue
							}
							skipped++
							if key != "" {
								t.Errorf("%s %s with an Idempotency-Key skips the validator", method, target)
							}
							reached = false
							validator.ServeHTTP(httptest.NewRecorder(), r)
							if !reached {
								t.Errorf("%s %s (body %q) skips the validator, which refuses it", method, target, body)
							}
						}
					}
				}
			}
		}
	}
	for _, target := range []string{"/orders/17/accept", "/orders/1/take", "/orders/9223372036854775807/pass"} {
		if !skips(httptest.NewRequest(http.MethodPatch, target, nil)) {
			t.Errorf("PATCH %s goes through the validator; it is a well-formed move", target)
		}
	}
	t.Logf("%d of %d requests skip the validator", skipped, total)
}
