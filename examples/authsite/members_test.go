package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestAuthsite_MembersRoute exercises the RBAC route over plain HTTP: GET /api/members refuses an
// anonymous caller (401) and a cookie without the XSRF header (401), refuses a dev-login user, who
// has no role (403), and admits demo, whom the site's ClaimsUpdater makes a member (200).
func TestAuthsite_MembersRoute(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	s, err := newSite(context.Background(), base, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(ts.Close)

	// browser is a client with its own cookies; call GETs a route as the page's script would, with
	// the XSRF cookie copied into the header when xsrf is set.
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar}
	}
	call := func(c *http.Client, path string, xsrf bool) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if xsrf {
			u, _ := url.Parse(base)
			for _, ck := range c.Jar.Cookies(u) {
				if ck.Name == "XSRF-TOKEN" {
					req.Header.Set("X-XSRF-TOKEN", ck.Value)
				}
			}
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	members := func(c *http.Client, xsrf bool) (int, map[string]any) {
		t.Helper()
		return call(c, "/api/members", xsrf)
	}
	mustOK := func(resp *http.Response, err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", what, resp.StatusCode, b)
		}
	}

	if st, _ := members(browser(), false); st != http.StatusUnauthorized {
		t.Fatalf("anonymous: %d", st)
	}

	demo := browser()
	resp, err := demo.Post(base+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	mustOK(resp, err, "direct login")
	if st, _ := members(demo, false); st != http.StatusUnauthorized {
		t.Fatalf("cookie without the XSRF header: %d", st)
	}
	if st, body := members(demo, true); st != http.StatusOK || body["name"] != "demo" || body["role"] != "member" {
		t.Fatalf("demo: %d %v", st, body)
	}

	// A dev login: the site's login redirects to the dev server's page, whose form posts back.
	dev := browser()
	resp, err = dev.Get(base + "/auth/dev/login")
	mustOK(resp, err, "dev page")
	authURL := resp.Request.URL
	q := authURL.Query()
	form := url.Values{"username": {"visitor"}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	resp, err = dev.PostForm(authURL.String(), form)
	mustOK(resp, err, "dev login")
	if st, body := call(dev, "/api/me", true); st != http.StatusOK || body["name"] != "visitor" {
		t.Fatalf("dev user on /api/me: %d %v", st, body)
	}
	if st, body := members(dev, true); st != http.StatusForbidden {
		t.Fatalf("dev user without a role: %d %v", st, body)
	}
}
