package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/throttletest"
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

// throttleSite drives the orders password grant for the shared throttle scenarios.
type throttleSite struct{ e *env }

func (s throttleSite) Register(name, pw string)  { s.e.register(name, pw, "Customer") }
func (s throttleSite) Login(name, pw string) int { return s.e.passwordLogin(name, pw).status }
func (s throttleSite) WantBlocked(name, pw, secs string) {
	s.e.t.Helper()
	s.e.wantBlocked(s.e.passwordLogin(name, pw), secs)
}
func (s throttleSite) LoginContext(ctx context.Context, name, pw string) (int, error) {
	q := url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"username": {name}, "password": {pw}}
	req, err := http.NewRequestWithContext(ctx, "POST", s.e.url+"/oauth/token?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	res, err := s.e.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return res.StatusCode, nil
}
func (s throttleSite) From(ip string) throttletest.Site { return throttleSite{s.e.from(ip)} }

// TestOAuth_LoginThrottle holds the token endpoint's password grant to the shared throttle
// scenarios: per username (matched without regard to case) and address, per address, shared by
// instances; a wrong password is invalid_grant (400).
func TestOAuth_LoginThrottle(t *testing.T) {
	t.Parallel()
	throttletest.Run(t, throttletest.Surface{
		Start: func(t *testing.T, pool *pgxpool.Pool, o throttle.Options, h *password.Hasher) throttletest.Site {
			if h == nil {
				h = sharedHasher()
			}
			return throttleSite{newEnvHasher(t, pool, 24*time.Hour, o, h)}
		},
		User: "alice", Other: "carol", UserVariant: "ALICE",
		Failed: http.StatusBadRequest,
	})
}
