package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/apitest"
	"github.com/triadhq/triad/impl/brands/httpapi"
	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/throttle/throttletest"
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

// TestLoginThrottle: ten wrong passwords for one email from one address block that pair for the
// rest of the 15-minute window, even for the right password; another address, another email and
// the end of the window are not blocked.
func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	clock := throttletest.NewClock()
	e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{Now: clock.Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	e.register("Bea", "bea@example.com", "correct-horse")

	// Emails are matched without regard to case and surrounding spaces, so are the failures.
	e.failLogins("ada@example.com", 5)
	e.failLogins(" ADA@example.com", 5)
	e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "900")
	// JSON bodies are counted under the same key.
	e.wantBlocked(e.do(request{method: "POST", path: "/api/user/login",
		json: map[string]string{"email": "Ada@Example.com", "password": "correct-horse"}}), "900")

	// Another address: the real user logs in from elsewhere while the attacker is blocked.
	e.from("127.0.0.2").login("ada@example.com", "correct-horse")
	// Another email from the blocked address.
	e.login("bea@example.com", "correct-horse")

	// Unknown emails are counted alike, so a 429 does not tell which emails are registered.
	e.failLogins("nobody@example.com", 10)
	e.wantBlocked(e.tryLogin("nobody@example.com", "correct-horse"), "900")

	// Retry-After counts down; the window ends 15 minutes after the first failure.
	clock.Advance(14*time.Minute + 30*time.Second)
	e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "30")
	clock.Advance(30 * time.Second)
	e.login("ada@example.com", "correct-horse")
}

// TestLoginThrottleResetOnSuccess: a successful login clears the failures before it.
func TestLoginThrottleResetOnSuccess(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{Now: throttletest.NewClock().Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	e.failLogins("ada@example.com", 9)
	e.login("ada@example.com", "correct-horse")
	e.failLogins("ada@example.com", 9) // 18 failures in the window, but only 9 since the success
	e.login("ada@example.com", "correct-horse")
	e.failLogins("ada@example.com", 10)
	e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "900")
}

// TestLoginThrottleConcurrent: 30 wrong passwords sent at once still get only 10 password checks;
// the others are refused with 429 while the first are being hashed.
func TestLoginThrottleConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{Now: throttletest.NewClock().Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.tryLogin("ada@example.com", "wrong-horse").status })
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusUnauthorized] != 10 || count[http.StatusTooManyRequests] != 20 {
		t.Fatalf("statuses %v; want 10 × 401 and 20 × 429", count)
	}
}

// TestLoginThrottleOutage: logins that fail because the database is down are not guesses: after
// the outage the right password logs in, and wrong ones still count from zero.
func TestLoginThrottleOutage(t *testing.T) {
	t.Parallel()
	pool, outage := dbtest.NewWithOutage(t)
	e := newEnvPool(t, pool, httpapi.Options{Logins: throttle.Options{Max: 4, Now: throttletest.NewClock().Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	outage.Begin()
	for i := range 15 {
		pw := "wrong-horse"
		if i%2 == 0 {
			pw = "correct-horse"
		}
		if r := e.tryLogin("ada@example.com", pw); r.status < 500 {
			t.Fatalf("login %d during the outage: %d %s", i+1, r.status, r.body)
		}
	}
	outage.End()
	e.login("ada@example.com", "correct-horse")
	e.failLogins("ada@example.com", 4)
	e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "900")
}

// TestLoginThrottleSharedByInstances: two server instances on one database share the count: four
// wrong passwords (the limit, made small to spare hashing) spread over both block the account on
// both from the fifth attempt.
func TestLoginThrottleSharedByInstances(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	clock := throttletest.NewClock()
	var es []*env
	for range 2 {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		es = append(es, newEnvPool(t, pool, httpapi.Options{Logins: throttle.Options{Max: 4, Now: clock.Now}}))
	}
	es[0].register("Ada", "ada@example.com", "correct-horse")
	for range 2 {
		es[0].failLogins("ada@example.com", 1)
		es[1].failLogins("ada@example.com", 1)
	}
	for _, e := range es {
		e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "900")
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

// TestLoginThrottlePerAddress: one address guessing over many distinct emails gets 429 once the
// address has AddressMax failures, for every email, the right password included; another address
// is not affected and its real user logs in; the block ends with the window.
func TestLoginThrottlePerAddress(t *testing.T) {
	t.Parallel()
	clock := throttletest.NewClock()
	e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{AddressMax: 12, Now: clock.Now}})
	e.register("Ada", "ada@example.com", "correct-horse")
	for i := range 12 { // one failure per email: the per-email limit never fires
		e.failLogins(fmt.Sprintf("guess%d@example.com", i), 1)
	}
	e.wantBlocked(e.tryLogin("guess12@example.com", "wrong-horse"), "900")
	e.wantBlocked(e.tryLogin("ada@example.com", "correct-horse"), "900")

	other := e.from("127.0.0.2")
	other.login("ada@example.com", "correct-horse")
	other.failLogins("guess0@example.com", 1)

	clock.Advance(15 * time.Minute)
	e.login("ada@example.com", "correct-horse")
}
