package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// TestUnvalidated_TakeNoOtherInput: every operation of unvalidated is a GET of api/auth.yaml
// with no body and no input but the X-XSRF-TOKEN header (whose bound impl/surfaces/auth checks against the
// spec), so skipping kin-openapi there loses no check; every other operation of the spec goes
// through the validator.
func TestUnvalidated_TakeNoOtherInput(t *testing.T) {
	t.Parallel()
	spec := apitest.Spec(t, "auth.yaml")
	skips, err := router.Skips(spec, unvalidated)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			_, listed := unvalidated[web.GeneratedOperationID(op.OperationID)]
			if listed && method != http.MethodGet {
				t.Errorf("%s %s skips the validator but is no GET", method, path)
			}
			if listed && op.RequestBody != nil {
				t.Errorf("%s %s skips the validator but the spec gives it a body", method, path)
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if listed && (p.Value.In != "header" || !strings.EqualFold(p.Value.Name, token.DefaultXSRFHeaderKey)) {
					t.Errorf("%s %s skips the validator but takes %s %s, which nothing else checks", method, path, p.Value.In, p.Value.Name)
				}
			}
			r := httptest.NewRequest(method, strings.ReplaceAll(strings.ReplaceAll(path, "{", "x"), "}", "x"), nil)
			if got := skips(r); got != listed {
				t.Errorf("%s %s: skips the validator %v, want %v", method, path, got, listed)
			}
			seen++
		}
	}
	if seen == 0 || len(unvalidated) != 3 {
		t.Fatalf("%d operations, %d of them unvalidated: the walk is broken", seen, len(unvalidated))
	}
}
