package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestDetails_EveryProblemAtOnce: a refused brands request names every problem in one answer, the
// spec's and the domain's own (brands.CheckField) alike, each with where, which field and the
// rule; the domain's codes (control_character, at_least_one, format uri, blank) come from the
// domain's checks on a body the spec accepts too.
func TestDetails_EveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	user := e.register("Detail User", "details@brands.test", "details-password")
	admin := e.admin()
	tests := []struct {
		name string
		rq   request
		want []string // "in field code [limit]"
	}{
		{"spec and domain together, JSON", request{method: "POST", path: "/api/user/register",
			json: map[string]any{"name": "Ada\u0007", "email": "not-an-email", "password": "short"}},
			[]string{"body email format", "body name control_character", "body password too_short 8"}},
		{"spec and domain together, form", request{method: "POST", path: "/api/user/register",
			form: url.Values{"name": {"Ada\u0007"}, "email": {"not-an-email"}, "password": {"long-enough-password"}}},
			[]string{"body email format", "body name control_character"}},
		{"the domain alone: blank and control characters", request{method: "POST", path: "/api/user/register",
			json: map[string]any{"name": "   ", "email": "ok@brands.test", "password": "long-enough-password"}},
			[]string{"body name blank"}},
		{"at least one of name and email", request{method: "PUT", path: "/api/user/edit", token: user.Token,
			json: map[string]any{}}, []string{"body body at_least_one"}},
		{"an empty body where one is required", request{method: "PUT", path: "/api/user/edit", token: user.Token,
			form: url.Values{}}, []string{"body body required"}},
		{"a brand's URL, the domain's rule", request{method: "POST", path: "/api/brand", token: admin,
			json: map[string]any{"name": "Contoso", "url": "ftp://contoso.example"}},
			[]string{"body url format"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.rq)
			body := r.errBody(t)
			if r.status != http.StatusBadRequest || body.Code != "validation_failed" || body.Details == nil {
				t.Fatalf("%d %s, want 400 validation_failed with details", r.status, r.body)
			}
			var got []string
			for _, d := range *body.Details {
				limit := ""
				if d.Limit != nil {
					limit = d.Limit.String()
				}
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", d.In, d.Field, d.Code, limit)))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("details %v, want %v (body %s)", got, tc.want, r.body)
			}
		})
	}
}
