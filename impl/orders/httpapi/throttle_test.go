package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/apitest"
	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/throttle/throttletest"
)

// from is a copy of e whose client connects from the loopback address ip (any of 127.0.0.0/8 is
// local on Linux), so the server sees another RemoteAddr.
func (e *env) from(ip string) *env {
	e.t.Helper()
	other := *e
	other.c = apitest.ClientFrom(e.t, fullSpec(e.t), ip)
	return &other
}

// passwordLogin is a password grant with every parameter in the query.
func (e *env) passwordLogin(username, pw string) resp {
	e.t.Helper()
	return e.tokenCall(url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"username": {username}, "password": {pw}}, nil, "", "")
}

// wantBlocked asserts the documented 429 with the whole window left.
func (e *env) wantBlocked(r resp, secs string) {
	e.t.Helper()
	want := `{"error":"invalid_grant","error_description":"too many failed logins; try again in ` + secs + ` seconds"}` + "\n"
	if r.status != http.StatusTooManyRequests || string(r.body) != want {
		e.t.Fatalf("got %d %s; want 429 %s", r.status, r.body, want)
	}
	if r.header.Get("Retry-After") != secs || r.header.Get("Cache-Control") != "no-store" {
		e.t.Fatalf("Retry-After %q, Cache-Control %q", r.header.Get("Retry-After"), r.header.Get("Cache-Control"))
	}
}

func (e *env) failLogins(username string, n int) {
	e.t.Helper()
	for i := range n {
		if r := e.passwordLogin(username, "wrong-password"); r.status != http.StatusBadRequest {
			e.t.Fatalf("wrong password %d of %d: %d %s", i+1, n, r.status, r.body)
		}
	}
}

// TestOAuth_LoginThrottle: ten wrong passwords for one username from one address block that pair
// for the rest of the 15-minute window, even for the right password; another address, another
// username and the end of the window are not blocked.
func TestOAuth_LoginThrottle(t *testing.T) {
	t.Parallel()
	clock := throttletest.NewClock()
	e := newEnvLogins(t, 24*time.Hour, throttle.Options{Now: clock.Now})
	e.register("alice", "alice-password", "Customer")
	e.register("carol", "carol-password", "Customer")

	// Usernames are matched without regard to case, so are the failures.
	e.failLogins("alice", 5)
	e.failLogins("ALICE", 5)
	e.wantBlocked(e.passwordLogin("alice", "alice-password"), "900")
	e.wantBlocked(e.passwordLogin("Alice", "wrong-password"), "900")

	// Another address: the victim logs in from home while the attacker is blocked.
	if ok := e.from("127.0.0.2").passwordLogin("alice", "alice-password"); ok.status != http.StatusOK {
		t.Fatalf("another address: %d %s", ok.status, ok.body)
	}
	// Another username from the blocked address.
	e.want(e.passwordLogin("carol", "carol-password"), http.StatusOK)

	// Unknown usernames are counted alike, so a 429 does not tell which usernames exist.
	e.failLogins("nobody", 10)
	e.wantBlocked(e.passwordLogin("nobody", "whatever"), "900")

	// Retry-After counts down; the window ends 15 minutes after the first failure.
	clock.Advance(14*time.Minute + 30*time.Second)
	e.wantBlocked(e.passwordLogin("alice", "alice-password"), "30")
	clock.Advance(30 * time.Second)
	e.want(e.passwordLogin("alice", "alice-password"), http.StatusOK)
}

// TestOAuth_LoginThrottleResetOnSuccess: a successful login clears the failures before it.
func TestOAuth_LoginThrottleResetOnSuccess(t *testing.T) {
	t.Parallel()
	e := newEnvLogins(t, 24*time.Hour, throttle.Options{Now: throttletest.NewClock().Now})
	e.register("alice", "alice-password", "Customer")
	e.failLogins("alice", 9)
	e.want(e.passwordLogin("alice", "alice-password"), http.StatusOK)
	e.failLogins("alice", 9) // 18 failures in the window, but only 9 since the success
	e.want(e.passwordLogin("alice", "alice-password"), http.StatusOK)
	e.failLogins("alice", 10)
	e.wantBlocked(e.passwordLogin("alice", "alice-password"), "900")
}

// TestOAuth_LoginThrottleRealClient: golang.org/x/oauth2 reports the block as a RetrieveError
// with status 429 and the RFC 6749 code.
func TestOAuth_LoginThrottleRealClient(t *testing.T) {
	t.Parallel()
	e := newEnvLogins(t, 24*time.Hour, throttle.Options{Now: throttletest.NewClock().Now})
	e.register("alice", "alice-password", "Customer")
	e.failLogins("alice", 10)
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, e.c)
	conf := &oauth2.Config{ClientID: testClientID, ClientSecret: testClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: e.url + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	tok, err := conf.PasswordCredentialsToken(ctx, "alice", "alice-password")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response.StatusCode != http.StatusTooManyRequests || re.ErrorCode != "invalid_grant" {
		t.Fatalf("blocked login through oauth2: token %v, err %v", tok, err)
	}
	if got := re.Response.Header.Get("Retry-After"); got != "900" {
		t.Fatalf("Retry-After %q", got)
	}
}

// TestOAuth_LoginThrottleConcurrent: 30 wrong passwords sent at once still get only 10 password
// checks; the others are refused with 429 while the first are being hashed.
func TestOAuth_LoginThrottleConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnvLogins(t, 24*time.Hour, throttle.Options{Now: throttletest.NewClock().Now})
	e.register("alice", "alice-password", "Customer")
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.passwordLogin("alice", "wrong-password").status })
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusBadRequest] != 10 || count[http.StatusTooManyRequests] != 20 {
		t.Fatalf("statuses %v; want 10 × 400 and 20 × 429", count)
	}
}

// TestOAuth_LoginThrottleOutage: logins that fail because the database is down are not guesses:
// after the outage the right password logs in, and wrong ones still count from zero.
func TestOAuth_LoginThrottleOutage(t *testing.T) {
	t.Parallel()
	pool, outage := dbtest.NewWithOutage(t)
	e := newEnvPool(t, pool, 24*time.Hour, throttle.Options{Max: 4, Now: throttletest.NewClock().Now})
	e.register("alice", "alice-password", "Customer")
	outage.Begin()
	for i := range 15 {
		pw := "wrong-password"
		if i%2 == 0 {
			pw = "alice-password"
		}
		if r := e.passwordLogin("alice", pw); r.status < 500 {
			t.Fatalf("login %d during the outage: %d %s", i+1, r.status, r.body)
		}
	}
	outage.End()
	e.want(e.passwordLogin("alice", "alice-password"), http.StatusOK)
	e.failLogins("alice", 4)
	e.wantBlocked(e.passwordLogin("alice", "alice-password"), "900")
}

// TestOAuth_LoginThrottleSharedByInstances: two server instances on one database share the count:
// four wrong passwords (the limit, made small to spare hashing) spread over both block the
// account on both from the fifth attempt.
func TestOAuth_LoginThrottleSharedByInstances(t *testing.T) {
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
		es = append(es, newEnvPool(t, pool, 24*time.Hour, throttle.Options{Max: 4, Now: clock.Now}))
	}
	es[0].register("alice", "alice-password", "Customer")
	for range 2 {
		es[0].failLogins("alice", 1)
		es[1].failLogins("alice", 1)
	}
	for _, e := range es {
		e.wantBlocked(e.passwordLogin("alice", "alice-password"), "900")
	}
}

// TestHasherBusy: with the only hashing worker taken and no queue, a login (known or unknown
// user) answers the documented 503 temporarily_unavailable and registration 503 server_busy, both
// with Retry-After at once; the refused logins do not count as failed ones, so once the worker is
// free the right password still gets a token.
func TestHasherBusy(t *testing.T) {
	t.Parallel()
	h := password.NewSized(password.Fast, 1, 0)
	e := newEnvHasher(t, dbtest.New(t), time.Hour, throttle.Options{Max: 2}, h)
	e.register("alice", "alice-password", "Customer")

	release, err := h.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "alice", "alice", "nobody"} { // more than the Max of 2
		r := e.passwordLogin(name, "alice-password")
		e.want(r, http.StatusServiceUnavailable)
		if want := `{"error":"temporarily_unavailable","error_description":"the server is busy; try again shortly"}` + "\n"; string(r.body) != want {
			t.Fatalf("login %s while busy: body %s, want %s", name, r.body, want)
		}
		if got := r.header.Get("Retry-After"); got != "1" {
			t.Fatalf("login %s while busy: Retry-After %q, want 1", name, got)
		}
	}
	r := e.do("POST", "/users", "", map[string]string{"username": "bob", "password": "bob-password", "userType": "Performer"})
	e.want(r, http.StatusServiceUnavailable)
	if code := r.errCode(t); code != "server_busy" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("register while busy: code %q, Retry-After %q; want server_busy and 1", code, r.header.Get("Retry-After"))
	}
	release()

	e.login("alice", "alice-password")
	e.register("bob", "bob-password", "Performer") // the refused registration stored nothing
}

// TestOAuth_LoginThrottlePerAddress: one address guessing over many distinct usernames gets 429
// once the address has AddressMax failures, for every username, the right password included;
// another address is not affected and its real user logs in; the block ends with the window.
func TestOAuth_LoginThrottlePerAddress(t *testing.T) {
	t.Parallel()
	clock := throttletest.NewClock()
	e := newEnvLogins(t, 24*time.Hour, throttle.Options{AddressMax: 12, Now: clock.Now})
	e.register("alice", "alice-password", "Customer")
	for i := range 12 { // one failure per username: the per-username limit never fires
		e.failLogins(fmt.Sprintf("guess%d", i), 1)
	}
	e.wantBlocked(e.passwordLogin("guess12", "wrong-password"), "900")
	e.wantBlocked(e.passwordLogin("alice", "alice-password"), "900")

	other := e.from("127.0.0.2")
	other.want(other.passwordLogin("alice", "alice-password"), http.StatusOK)
	other.failLogins("guess0", 1)

	clock.Advance(15 * time.Minute)
	e.want(e.passwordLogin("alice", "alice-password"), http.StatusOK)
}
