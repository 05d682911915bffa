package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	"github.com/triadhq/triad/impl/testkit/throttletest"
)

// TestRegister_CappedPerAddress: with the server's default cap, 40 sign-ups from one address meet
// 429 too_many_signups (with Retry-After up to the hour's end) from the 21st on, and nothing is
// stored for them; a refused or failed registration (an email taken) does not count; a user
// from another address registers as usual.
func TestRegister_CappedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httpapi.Options{Signups: loginguard.SignupOptions(throttle.Options{Now: throttletest.NewClock().Now})})
	signup := func(e *env, i int) resp {
		return e.do(request{method: "POST", path: "/api/user/register",
			form: url.Values{"name": {"Farm"}, "email": {fmt.Sprintf("farm%d@example.com", i)}, "password": {"farm-password"}}})
	}
	e.register("First", "farm0@example.com", "farm-password")
	e.want(signup(e, 0), http.StatusConflict) // taken: not counted
	for i := 1; i < loginguard.DefaultSignupMax; i++ {
		e.want(signup(e, i), http.StatusCreated)
	}
	for i := loginguard.DefaultSignupMax; i < 40; i++ {
		r := e.want(signup(e, i), http.StatusTooManyRequests)
		if code := r.errBody(t).Code; code != "too_many_signups" || r.header.Get("Retry-After") != "3600" {
			t.Fatalf("sign-up %d: code %q, Retry-After %q; want too_many_signups and 3600", i+1, code, r.header.Get("Retry-After"))
		}
	}
	var n int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM brand_users WHERE email LIKE 'farm%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != loginguard.DefaultSignupMax {
		t.Fatalf("%d accounts stored, want %d", n, loginguard.DefaultSignupMax)
	}
	e.from("127.0.0.2").register("Real", "real@example.com", "real-password")
}
