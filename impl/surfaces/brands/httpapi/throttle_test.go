package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/throttletest"
)

// from is a copy of e whose client connects from the loopback address ip (any of 127.0.0.0/8 is
// local on Linux), so the server sees another RemoteAddr.
func (e *env) from(ip string) *env {
	e.t.Helper()
	spec, err := brandsapi.GetSpec()
	if err != nil {
		e.t.Fatal(err)
	}
	other := *e
	other.c = apitest.ClientFrom(e.t, spec, ip)
	return &other
}

func (e *env) tryLogin(email, pw string) resp {
	e.t.Helper()
	return e.do(request{method: "POST", path: "/api/user/login", form: url.Values{"email": {email}, "password": {pw}}})
}

func (e *env) failLogins(email string, n int) {
	e.t.Helper()
	for i := range n {
		if r := e.tryLogin(email, "wrong-horse"); r.status != http.StatusUnauthorized {
			e.t.Fatalf("wrong password %d of %d: %d %s", i+1, n, r.status, r.body)
		}
	}
}

// wantBlocked asserts the documented 429 with secs seconds left.
func (e *env) wantBlocked(r resp, secs string) {
	e.t.Helper()
	e.want(r, http.StatusTooManyRequests)
	body := r.errBody(e.t)
	msg := "too many failed logins; try again in " + secs + " seconds"
	if body.Code != "too_many_attempts" || body.Message != msg || body.RequestId == nil || *body.RequestId != r.header.Get("X-Request-Id") {
		e.t.Fatalf("429 body %s; want code too_many_attempts, message %q and the request id", r.body, msg)
	}
	if got := r.header.Get("Retry-After"); got != secs {
		e.t.Fatalf("Retry-After %q, want %s", got, secs)
	}
}

// TestHasherBusy: with the only hashing worker taken and no queue, register, login and password
// change answer the documented 503 server_busy with Retry-After at once, and the refused logins
// do not count as failed ones: once the worker is free the right password still logs in.
func TestHasherBusy(t *testing.T) {
	t.Parallel()
	h := password.NewSized(password.Fast, 1, 0)
	e := newEnvWith(t, httpapi.Options{Hasher: h, Logins: throttle.Options{Max: 2}})
	ada := e.register("Ada", "ada@example.com", "correct-horse")

	release, err := h.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantBusy := func(what string, r resp) {
		t.Helper()
		e.want(r, http.StatusServiceUnavailable)
		body := r.errBody(t)
		if body.Code != "server_busy" || body.RequestId == nil || *body.RequestId != r.header.Get("X-Request-Id") {
			t.Fatalf("%s: 503 body %s; want code server_busy and the request id", what, r.body)
		}
		if got := r.header.Get("Retry-After"); got != "1" {
			t.Fatalf("%s: Retry-After %q, want 1", what, got)
		}
	}
	for range 3 { // more than the throttle's Max of 2
		wantBusy("login", e.tryLogin("ada@example.com", "correct-horse"))
	}
	wantBusy("register", e.do(request{method: "POST", path: "/api/user/register",
		form: url.Values{"name": {"Bea"}, "email": {"bea@example.com"}, "password": {"correct-horse"}}}))
	wantBusy("password change", e.do(request{method: "POST", path: "/api/user/reset", token: ada.Token,
		form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"staple-battery"}}}))
	release()

	e.want(e.tryLogin("ada@example.com", "correct-horse"), http.StatusOK)
	e.register("Bea", "bea@example.com", "correct-horse") // the refused registration stored nothing
}

// throttleSite drives brands login for the shared throttle scenarios.
type throttleSite struct{ e *env }

func (s throttleSite) Register(email, pw string)  { s.e.register("User", email, pw) }
func (s throttleSite) Login(email, pw string) int { return s.e.tryLogin(email, pw).status }
func (s throttleSite) WantBlocked(email, pw, secs string) {
	s.e.t.Helper()
	s.e.wantBlocked(s.e.tryLogin(email, pw), secs)
}
func (s throttleSite) LoginContext(ctx context.Context, email, pw string) (int, error) {
	form := url.Values{"email": {email}, "password": {pw}}
	req, err := http.NewRequestWithContext(ctx, "POST", s.e.url+"/api/user/login", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := s.e.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return res.StatusCode, nil
}
func (s throttleSite) From(ip string) throttletest.Site { return throttleSite{s.e.from(ip)} }

// TestLoginThrottle holds brands login to the shared throttle scenarios: per email (matched
// without regard to case and surrounding spaces) and address, per address, shared by instances.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	throttletest.Run(t, throttletest.Surface{
		Start: func(t *testing.T, pool *pgxpool.Pool, o throttle.Options, h *password.Hasher) throttletest.Site {
			return throttleSite{newEnvPool(t, pool, httpapi.Options{Logins: o, Hasher: h})}
		},
		User: "ada@example.com", Other: "bea@example.com", UserVariant: " ADA@example.com",
		Failed: http.StatusUnauthorized,
	})
}

// TestLoginThrottle_JSONCountsAlike: failures sent as form and as JSON count under one key.
func TestLoginThrottle_JSONCountsAlike(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{Now: throttletest.NewClock().Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	e.failLogins("ada@example.com", 10)
	e.wantBlocked(e.do(request{method: "POST", path: "/api/user/login",
		json: map[string]string{"email": "Ada@Example.com", "password": "correct-horse"}}), "900")
}
