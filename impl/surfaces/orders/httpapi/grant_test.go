package httpapi_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/refusal"
)

// TestGrant_RefusalTableIsDocumented: every answer of the token endpoint's one table of refused
// logins (refusal.OAuthLogin: the login guard's outcomes in RFC 6749 codes) is a status
// api/orders.yaml documents for POST /oauth/token with the OAuthError body, so no refused login
// answers a status or a body the spec does not promise.
func TestGrant_RefusalTableIsDocumented(t *testing.T) {
	op := fullSpec(t).Paths.Find("/oauth/token").Post
	if op == nil {
		t.Fatal("api/orders.yaml has no POST /oauth/token")
	}
	for _, e := range refusal.OAuthLogin {
		r := op.Responses.Value(strconv.Itoa(e.Status))
		if r == nil || r.Value == nil {
			t.Errorf("%v answers %d %s, which POST /oauth/token does not document", e.Err, e.Status, e.Code)
			continue
		}
		if mt := r.Value.Content.Get("application/json"); mt == nil || !oauthBody(mt.Schema) {
			t.Errorf("%v answers %d, which POST /oauth/token documents without the OAuthError body", e.Err, e.Status)
		}
	}
}

// oauthBody reports whether s is the OAuthError body, or a oneOf of bodies with it (503: the
// shared ApiError is the other, for an unreachable database).
func oauthBody(s *openapi3.SchemaRef) bool {
	if s == nil || s.Value == nil {
		return false
	}
	if s.Value.Properties["error"] != nil && s.Value.Properties["error_description"] != nil {
		return true
	}
	return slices.ContainsFunc(s.Value.OneOf, oauthBody)
}
