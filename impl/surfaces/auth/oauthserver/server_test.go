package oauthserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
)

const redirectURI = "http://client.example/auth/local/callback"

// start serves an oauthserver on a random port; opts.URL is filled in.
func start(t *testing.T, opts oauthserver.Options) (*oauthserver.Server, *httptest.Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	opts.URL = "http://" + ts.Listener.Addr().String()
	if opts.Clients == nil {
		opts.Clients = []oauthserver.Client{{ID: "cid", Secret: "csecret", RedirectURIs: []string{redirectURI}}}
	}
	srv, err := oauthserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return srv, ts
}

func config(srv *oauthserver.Server) *oauth2.Config {
	return &oauth2.Config{ClientID: "cid", ClientSecret: "csecret", Endpoint: srv.Endpoint(), RedirectURL: redirectURI}
}

// noFollow is a client that stops at the first redirect so the test can read the Location.
func noFollow() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// redirected fetches u (GET, or POST with form) and returns the parsed Location of the redirect:
// 302 after a GET, 303 after a POST.
func redirected(t *testing.T, method, u string, form url.Values) *url.URL {
	t.Helper()
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = noFollow().PostForm(u, form)
	} else {
		resp, err = noFollow().Get(u)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := http.StatusFound
	if method == http.MethodPost {
		want = http.StatusSeeOther
	}
	if resp.StatusCode != want {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: status %d, want %d; body %s", method, u, resp.StatusCode, want, b)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func oauthErr(t *testing.T, err error) *oauth2.RetrieveError {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a RetrieveError", err)
	}
	return re
}

func TestServer_CodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{DefaultUser: "alice"})
	cfg := config(srv)
	verifier := oauth2.GenerateVerifier()
	loc := redirected(t, http.MethodGet, cfg.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier)), nil)
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Fatalf("redirected to %q, want %q", got, redirectURI)
	}
	if loc.Query().Get("state") != "st-1" {
		t.Fatalf("state %q not echoed", loc.Query().Get("state"))
	}
	ctx := context.Background()
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
		t.Fatalf("token %+v lacks type or expiry", tok)
	}
	resp, err := cfg.Client(ctx, tok).Get(srv.InfoURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u oauthserver.User
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || u.ID != "alice" || u.Name != "alice" {
		t.Fatalf("userinfo %d %+v", resp.StatusCode, u)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("userinfo Cache-Control %q", cc)
	}
}

func TestServer_LoginPage(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{WithLoginPage: true, AnyUser: true})
	cfg := config(srv)
	authURL := cfg.AuthCodeURL("st")
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `name="username"`) {
		t.Fatalf("login page %d: %s", resp.StatusCode, page)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatal("login page may be framed")
	}
	// An empty user name is refused and the page shown again.
	resp, err = http.PostForm(authURL, url.Values{"username": {""}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("empty login: status %d, want 401", resp.StatusCode)
	}
	loc := redirected(t, http.MethodPost, authURL, url.Values{"username": {"bob"}})
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == "" {
		t.Fatal("no access token")
	}
	// Cancel on the page is access_denied at the client, with the state.
	loc = redirected(t, http.MethodPost, authURL, url.Values{"deny": {"1"}})
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "st" {
		t.Fatalf("deny redirect %v", loc)
	}
}

func TestServer_CustomLoginPageAndAuthenticate(t *testing.T) {
	t.Parallel()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "custom page")
	})
	srv, _ := start(t, oauthserver.Options{
		WithLoginPage:    true,
		LoginPageHandler: page,
		Authenticate: func(u, p string) (oauthserver.User, bool) {
			if u == "carol" && p == "pw" {
				return oauthserver.User{ID: "42", Name: "Carol", Picture: "http://pic/c.png"}, true
			}
			return oauthserver.User{}, false
		},
	})
	cfg := config(srv)
	authURL := cfg.AuthCodeURL("s")
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "custom page" {
		t.Fatalf("page %q", b)
	}
	resp, err = http.PostForm(authURL, url.Values{"username": {"carol"}, "password": {"bad"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	// The page is shown again with 401, keeping the handler's own headers.
	if resp.StatusCode != 401 || string(b) != "custom page" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("bad password: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	loc := redirected(t, http.MethodPost, authURL, url.Values{"username": {"carol"}, "password": {"pw"}})
	ctx := context.Background()
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = cfg.Client(ctx, tok).Get(srv.InfoURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u oauthserver.User
	_ = json.NewDecoder(resp.Body).Decode(&u)
	if u != (oauthserver.User{ID: "42", Name: "Carol", Picture: "http://pic/c.png"}) {
		t.Fatalf("user %+v", u)
	}
}

// TestServer_AuthorizeErrors covers RFC 6749 §4.1.2.1: bad client or redirect URI is shown, never
// redirected; everything else goes back to the client with the state.
func TestServer_AuthorizeErrors(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, oauthserver.Options{})
	base := ts.URL + oauthserver.AuthorizePath
	shown := []struct{ name, query string }{
		{"unknown client", "response_type=code&client_id=nope&redirect_uri=" + url.QueryEscape(redirectURI)},
		{"prefix redirect", "response_type=code&client_id=cid&redirect_uri=" + url.QueryEscape(redirectURI+"/x")},
		{"other host", "response_type=code&client_id=cid&redirect_uri=" + url.QueryEscape("http://evil.example/auth/local/callback")},
		{"trailing slash", "response_type=code&client_id=cid&redirect_uri=" + url.QueryEscape(redirectURI+"/")},
	}
	for _, tc := range shown {
		resp, err := noFollow().Get(base + "?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || body["error"] == "" {
			t.Errorf("%s: status %d location %q body %v", tc.name, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}
	redirectedErrs := []struct{ name, query, want string }{
		{"token response type", "response_type=token", "unsupported_response_type"},
		{"plain pkce", "response_type=code&code_challenge=abc&code_challenge_method=plain", "invalid_request"},
	}
	for _, tc := range redirectedErrs {
		loc := redirected(t, http.MethodGet, base+"?client_id=cid&state=xyz&redirect_uri="+url.QueryEscape(redirectURI)+"&"+tc.query, nil)
		if loc.Query().Get("error") != tc.want || loc.Query().Get("state") != "xyz" {
			t.Errorf("%s: redirect %v, want error %s", tc.name, loc, tc.want)
		}
	}
	_ = srv
}

func TestServer_TokenErrors(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, oauthserver.Options{})
	cfg := config(srv)
	ctx := context.Background()
	code := func(opts ...oauth2.AuthCodeOption) string {
		return redirected(t, http.MethodGet, cfg.AuthCodeURL("s", opts...), nil).Query().Get("code")
	}

	// Wrong secret: invalid_client, 401.
	bad := *cfg
	bad.ClientSecret = "wrong"
	_, err := bad.Exchange(ctx, code())
	if re := oauthErr(t, err); re.ErrorCode != "invalid_client" || re.Response.StatusCode != 401 {
		t.Fatalf("wrong secret: %v", re)
	}
	// One-time codes: the second exchange fails and revokes the first token.
	c := code()
	tok, err := cfg.Exchange(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Exchange(ctx, c)
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("replay: %v", re)
	}
	resp, err := cfg.Client(ctx, tok).Get(srv.InfoURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("token of a replayed code still works: %d", resp.StatusCode)
	}
	// Redirect URI must repeat the authorization request's.
	other := *cfg
	other.RedirectURL = redirectURI + "?x=1"
	_, err = other.Exchange(ctx, code())
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("redirect mismatch: %v", re)
	}
	// PKCE: wrong verifier and missing verifier.
	v := oauth2.GenerateVerifier()
	_, err = cfg.Exchange(ctx, code(oauth2.S256ChallengeOption(v)), oauth2.VerifierOption(oauth2.GenerateVerifier()))
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("wrong verifier: %v", re)
	}
	_, err = cfg.Exchange(ctx, code(oauth2.S256ChallengeOption(v)))
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("missing verifier: %v", re)
	}
	// Unknown grant type, answered with no-store.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+oauthserver.TokenPath, strings.NewReader("grant_type=password&username=a&password=b"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("cid", "csecret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 400 || body["error"] != "unsupported_grant_type" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("password grant: %d %v %q", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
	}
	// The bearer scheme is case-insensitive; another scheme is not a bearer token.
	good, err := cfg.Exchange(ctx, code())
	if err != nil {
		t.Fatal(err)
	}
	for auth, want := range map[string]int{"bearer " + good.AccessToken: 200, "BEARER " + good.AccessToken: 200,
		"Basic " + good.AccessToken: 401, "Bearer": 401} {
		req, _ := http.NewRequest(http.MethodGet, srv.InfoURL(), nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("userinfo with %q: %d, want %d", strings.Fields(auth)[0], resp.StatusCode, want)
		}
	}
	// Missing bearer token at userinfo.
	resp, err = http.Get(srv.InfoURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("userinfo without token: %d", resp.StatusCode)
	}
}

func TestServer_CodeExpires(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv, _ := start(t, oauthserver.Options{Now: clock, CodeTTL: time.Minute})
	cfg := config(srv)
	c := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil).Query().Get("code")
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	_, err := cfg.Exchange(context.Background(), c)
	if re := oauthErr(t, err); re.ErrorCode != "invalid_grant" {
		t.Fatalf("expired code: %v", re)
	}
}

// TestServer_ConcurrentExchange races many exchanges of one code: exactly one may win.
func TestServer_ConcurrentExchange(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{})
	cfg := config(srv)
	c := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil).Query().Get("code")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := cfg.Exchange(context.Background(), c); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d exchanges of one code succeeded, want 1", wins)
	}
}

func TestNew_Validates(t *testing.T) {
	t.Parallel()
	for _, o := range []oauthserver.Options{
		{URL: "localhost:8084", Clients: []oauthserver.Client{{ID: "a", Secret: "b", RedirectURIs: []string{"x"}}}},
		{URL: "http://localhost:8084"},
		{URL: "http://localhost:8084", Clients: []oauthserver.Client{{ID: "a", Secret: "b"}}},
		// A login page that checks nobody: refused unless AnyUser says so.
		{URL: "http://localhost:8084", WithLoginPage: true, Clients: []oauthserver.Client{{ID: "a", Secret: "b", RedirectURIs: []string{"x"}}}},
	} {
		if _, err := oauthserver.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// TestServer_RunOnURLPort: Run listens on the port of its URL and stops with the context; a taken
// port is an error, not a silent fallback.
func TestServer_RunOnURLPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	url := "http://" + ln.Addr().String()
	srv, err := oauthserver.New(oauthserver.Options{URL: url,
		Clients: []oauthserver.Client{{ID: "cid", Secret: "csecret", RedirectURIs: []string{redirectURI}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Run(context.Background()); err == nil {
		t.Fatal("Run on a taken port succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	loc := redirected(t, http.MethodGet, config(srv).AuthCodeURL("s"), nil)
	if loc.Query().Get("code") == "" {
		t.Fatal("no code from the served server")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

// TestServer_RedirectURIOmitted covers RFC 6749 §3.1.2.3 and §4.1.3: a client with one registered
// redirect URI may leave redirect_uri out of the authorization request, and then out of the token
// request too; one that named it must repeat it exactly at the token endpoint.
func TestServer_RedirectURIOmitted(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{DefaultUser: "dana"})
	ctx := context.Background()
	implicit := config(srv)
	implicit.RedirectURL = "" // golang.org/x/oauth2 then sends no redirect_uri at all
	loc := redirected(t, http.MethodGet, implicit.AuthCodeURL("s"), nil)
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Fatalf("redirected to %q, want the registered %q", got, redirectURI)
	}
	if _, err := implicit.Exchange(ctx, loc.Query().Get("code")); err != nil {
		t.Fatalf("exchange without redirect_uri after an authorization without it: %v", err)
	}
	// Omitted at authorization but a wrong one at the token endpoint: refused.
	c := redirected(t, http.MethodGet, implicit.AuthCodeURL("s"), nil).Query().Get("code")
	wrong := config(srv)
	wrong.RedirectURL = "http://client.example/elsewhere"
	if _, err := wrong.Exchange(ctx, c); oauthErr(t, err).ErrorCode != "invalid_grant" {
		t.Fatalf("wrong redirect_uri at the token endpoint: %v", err)
	}
	// Named at authorization, omitted at the token endpoint: refused.
	c = redirected(t, http.MethodGet, config(srv).AuthCodeURL("s"), nil).Query().Get("code")
	if _, err := implicit.Exchange(ctx, c); oauthErr(t, err).ErrorCode != "invalid_grant" {
		t.Fatalf("redirect_uri dropped at the token endpoint: %v", err)
	}
}
