package provider_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// newDevSite serves a dev provider under /auth/dev/ of a test server.
func newDevSite(t *testing.T) (*httptest.Server, *provider.Dev, *token.Service) {
	t.Helper()
	return newDevSiteOpts(t, provider.DevOpts{Port: 0, EmailFn: func(u string) string { return u + "@example.com" }})
}

// newDevSiteOpts is newDevSite with the provider's options.
func newDevSiteOpts(t *testing.T, o provider.DevOpts) (*httptest.Server, *provider.Dev, *token.Service) {
	t.Helper()
	ts := token.NewService(token.Opts{SecretReader: token.SecretFunc(func(string) (string, error) { return "test-secret-0123456789abcdef", nil }), Issuer: "test"})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dev, err := provider.NewDev(provider.Params{URL: srv.URL, JwtService: ts, Cid: "", Csecret: "",
		AllowedRedirect: func(from string) bool { return strings.HasPrefix(from, srv.URL+"/") }}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	mux.HandleFunc("/auth/dev/login", dev.LoginHandler)
	mux.HandleFunc("/auth/dev/callback", dev.AuthHandler)
	mux.HandleFunc("/auth/dev/logout", dev.LogoutHandler)
	return srv, dev, ts
}

func TestDev_LoginFlow(t *testing.T) {
	srv, _, ts := newDevSite(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/auth/dev/login?site=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Request.URL.Path, "/login/oauth/authorize") {
		t.Fatalf("login page: %d %s", resp.StatusCode, resp.Request.URL)
	}
	q := resp.Request.URL.Query()
	form := url.Values{"username": {"alice"}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	resp, err = c.PostForm(resp.Request.URL.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var u token.User
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil || resp.StatusCode != 200 {
		t.Fatalf("callback: %d %v", resp.StatusCode, err)
	}
	if u.Name != "alice" || u.ID != token.UserID("dev", "alice") || u.Email != "alice@example.com" || u.Audience != "x" {
		t.Fatalf("user %+v", u)
	}
	su, _ := url.Parse(srv.URL)
	var jwtCookie string
	for _, ck := range jar.Cookies(su) {
		if ck.Name == "JWT" {
			jwtCookie = ck.Value
		}
	}
	claims, err := ts.Parse(jwtCookie)
	if err != nil || claims.User.Name != "alice" {
		t.Fatalf("cookie token: %v %+v", err, claims)
	}
}

// TestDev_ExampleCallback: with ExampleCallback the callback completes the documented example
// query without a login (what Swagger UI's Try it out sends), as often as it is sent, and logs in
// the example user; any other state, or the example with an error, is checked as always; without
// the option (the default) the example is a forged callback.
func TestDev_ExampleCallback(t *testing.T) {
	example := "/auth/dev/callback?state=" + provider.DevExampleState + "&code=" + provider.DevExampleCode
	call := func(srv *httptest.Server, path string) (int, string, []*http.Cookie) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String(), resp.Cookies()
	}
	on, _, ts := newDevSiteOpts(t, provider.DevOpts{Port: 0, ExampleCallback: true, EmailFn: func(u string) string { return u + "@example.com" }})
	for range 2 {
		status, body, cookies := call(on, example)
		if status != http.StatusOK || !strings.Contains(body, `"name":"`+provider.DevExampleUser+`"`) || !strings.Contains(body, `"status":"logged in"`) {
			t.Fatalf("example callback: %d %s", status, body)
		}
		var jwt string
		for _, c := range cookies {
			if c.Name == "JWT" {
				jwt = c.Value
			}
		}
		claims, err := ts.Parse(jwt)
		if err != nil || claims.User.ID != token.UserID("dev", provider.DevExampleUser) || claims.User.Email != provider.DevExampleUser+"@example.com" {
			t.Fatalf("example callback's token: %v %+v", err, claims.User)
		}
	}
	for _, path := range []string{
		"/auth/dev/callback?state=other&code=" + provider.DevExampleCode,
		"/auth/dev/callback?state=" + provider.DevExampleState + "&code=other",
		example + "&error=access_denied",
	} {
		if status, body, _ := call(on, path); status != http.StatusBadRequest || !strings.Contains(body, provider.CodeBadState) {
			t.Errorf("%s with ExampleCallback: %d %s, want 400 %s", path, status, body, provider.CodeBadState)
		}
	}
	off, _, _ := newDevSite(t)
	if status, body, _ := call(off, example); status != http.StatusBadRequest || !strings.Contains(body, provider.CodeBadState) {
		t.Fatalf("example callback without ExampleCallback: %d %s, want 400 %s", status, body, provider.CodeBadState)
	}
}

// TestDev_ReplicasShareOneServer: a second provider on a taken port uses the running dev server
// only when asked to (dev-mode replicas), and fails otherwise, as a misconfigured port should.
func TestDev_ReplicasShareOneServer(t *testing.T) {
	_, first, _ := newDevSite(t)
	u, err := url.Parse(first.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	params := provider.Params{URL: "http://127.0.0.1:1", JwtService: token.NewService(token.Opts{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "test-secret-0123456789abcdef", nil }), Issuer: "test"})}

	if _, err := provider.NewDev(params, provider.DevOpts{Port: port}); err == nil {
		t.Fatal("a second dev server on a taken port started without Share")
	}
	second, err := provider.NewDev(params, provider.DevOpts{Port: port, Share: true})
	if err != nil {
		t.Fatalf("Share: %v", err)
	}
	t.Cleanup(func() { _ = second.Close() })
	if second.URL() != first.URL() {
		t.Fatalf("shared provider points at %s, want the running server %s", second.URL(), first.URL())
	}
	// The shared provider's endpoints reach the running server: its login page answers.
	resp, err := http.Get(second.URL() + "/login/oauth/authorize?client_id=x&redirect_uri=" + url.QueryEscape("http://127.0.0.1:1/cb") + "&response_type=code&state=s")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		t.Fatalf("running dev server answered %d", resp.StatusCode)
	}
}
