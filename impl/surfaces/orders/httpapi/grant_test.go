package httpapi_test

import (
	"strconv"
	"testing"

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
		mt := r.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || mt.Schema.Value.Properties["error"] == nil {
			t.Errorf("%v answers %d, which POST /oauth/token documents without the OAuthError body", e.Err, e.Status)
		}
	}
}
