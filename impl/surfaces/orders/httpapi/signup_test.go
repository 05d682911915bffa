package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders/httpapi"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/throttletest"
)

// TestRegister_CappedPerAddress: with the server's default cap, 40 sign-ups from one address meet
// 429 too_many_signups (with Retry-After up to the hour's end) from the 21st on, and mint no
// account (no starting balance); a failed registration (a name taken) does not count; a user from
// another address registers as usual.
func TestRegister_CappedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, dbtest.New(t), httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, Signups: loginguard.SignupOptions(throttle.Options{Now: throttletest.NewClock().Now})}})
	signup := func(e *env, i int) resp {
		return e.do("POST", "/users", "", map[string]string{"username": fmt.Sprintf("farm%d", i), "password": "farm-password", "userType": "Customer"})
	}
	e.register("farm0", "farm-password", "Customer")
	e.want(signup(e, 0), http.StatusConflict) // taken: not counted
	for i := 1; i < loginguard.DefaultSignupMax; i++ {
		e.want(signup(e, i), http.StatusCreated)
	}
	for i := loginguard.DefaultSignupMax; i < 40; i++ {
		r := signup(e, i)
		e.want(r, http.StatusTooManyRequests)
		if code := r.errCode(t); code != "too_many_signups" || r.header.Get("Retry-After") != "3600" {
			t.Fatalf("sign-up %d: code %q, Retry-After %q; want too_many_signups and 3600", i+1, code, r.header.Get("Retry-After"))
		}
	}
	var n int
	if err := e.pool.QueryRow(t.Context(), "SELECT count(*) FROM order_users WHERE username LIKE 'farm%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != loginguard.DefaultSignupMax {
		t.Fatalf("%d accounts stored, want %d", n, loginguard.DefaultSignupMax)
	}
	e.from("127.0.0.2").register("real", "real-password", "Customer")
}
