package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestXSRFHeaderBound_MatchesTheSpec: /auth/user and /auth/status check the X-XSRF-TOKEN length
// themselves (no spec validator runs in front of them), so maxXSRFHeader copies the spec's
// maxLength. Every operation of api/auth.yaml that takes the header must bound it exactly so, and
// the check must accept that length and refuse one more; a bound changed on one side only fails here.
func TestXSRFHeaderBound_MatchesTheSpec(t *testing.T) {
	t.Parallel()
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			for _, pr := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				p := pr.Value
				if p.In != "header" || !strings.EqualFold(p.Name, token.DefaultXSRFHeaderKey) {
					continue
				}
				seen[method+" "+path] = true
				ml := p.Schema.Value.MaxLength
				if ml == nil {
					t.Errorf("%s %s: the spec does not bound %s; the handlers bound it to %d", method, path, p.Name, maxXSRFHeader)
				} else if int(*ml) != maxXSRFHeader {
					t.Errorf("%s %s: the spec bounds %s to %d, the handlers to %d", method, path, p.Name, *ml, maxXSRFHeader)
				}
			}
		}
	}
	for _, route := range []string{"GET /auth/user", "GET /auth/status"} {
		if !seen[route] {
			t.Errorf("%s checks %s by hand but the spec does not declare the header there", route, token.DefaultXSRFHeaderKey)
		}
	}

	s := &Service{jwt: token.NewService(token.Opts{})}
	for n, refused := range map[int]bool{maxXSRFHeader: false, maxXSRFHeader + 1: true} {
		r := httptest.NewRequest(http.MethodGet, "/auth/user", nil)
		r.Header.Set(token.DefaultXSRFHeaderKey, strings.Repeat("x", n))
		w := httptest.NewRecorder()
		if got := s.badXSRFHeader(w, r); got != refused {
			t.Errorf("a %d-character header: refused %v, want %v", n, got, refused)
		}
	}
}
