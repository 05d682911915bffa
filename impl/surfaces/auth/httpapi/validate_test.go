package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// TestUnvalidated_TakeNoOtherInput: every route of unvalidated is a GET of api/auth.yaml
// with no body and no input but the X-XSRF-TOKEN header (whose bound impl/surfaces/auth checks against the
// spec), so skipping kin-openapi there loses no check; every other operation of the spec goes
// through the validator.
func TestUnvalidated_TakeNoOtherInput(t *testing.T) {
	t.Parallel()
	spec := apitest.Spec(t, "auth.yaml")
	for _, path := range unvalidated {
		item := spec.Paths.Value(path)
		if item == nil || item.Get == nil {
			t.Errorf("%s skips the validator but the spec has no GET %s", path, path)
			continue
		}
		if item.Get.RequestBody != nil {
			t.Errorf("GET %s skips the validator but the spec gives it a body", path)
		}
		for _, p := range append(slices.Clone(item.Parameters), item.Get.Parameters...) {
			if p.Value.In != "header" || !strings.EqualFold(p.Value.Name, token.DefaultXSRFHeaderKey) {
				t.Errorf("GET %s skips the validator but takes %s %s, which nothing else checks", path, p.Value.In, p.Value.Name)
			}
		}
	}
	seen := 0
	for path, item := range spec.Paths.Map() {
		for method := range item.Operations() {
			r := httptest.NewRequest(method, strings.ReplaceAll(strings.ReplaceAll(path, "{", "x"), "}", "x"), nil)
			want := method != http.MethodGet || !slices.Contains(unvalidated, path)
			if got := validated(r); got != want {
				t.Errorf("%s %s: validated %v, want %v", method, path, got, want)
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("the spec has no operations; the walk is broken")
	}
}
