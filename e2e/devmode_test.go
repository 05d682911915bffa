package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestDevMode_AnyPortWithoutAuthURL starts the binary as `-mode dev -addr 127.0.0.1:<port>` without
// -auth-url and logs in through the dev OAuth 2.0 provider as a single-page app on Vite's dev server
// would: AUTH_URL defaults to the address listened on, so the provider sends the browser back to
// this server's callback (not to localhost:8080), the avatar link points here too, and the dev CORS
// origin `from` names (http://localhost:5173) is where the login ends, while a foreign `from` is
// still not followed.
func TestDevMode_AnyPortWithoutAuthURL(t *testing.T) {
	t.Parallel()
	s := launchRetrying(t, launchOpts{dbURL: dbtest.NewURL(t), noAuthURL: true})
	waitReady(t, s.URL+"/readyz")
	if !strings.Contains(s.log.String(), `auth_url=`+s.URL) {
		t.Errorf("the log does not say which AUTH_URL dev mode chose (%s)", s.URL)
	}

	// login runs the dev OAuth 2.0 flow for user with from, following the redirects as a browser
	// would (each absolute URL as given), and returns the callback's answer.
	login := func(t *testing.T, browser *http.Client, user, from string) *http.Response {
		t.Helper()
		get := func(u string) *http.Response {
			t.Helper()
			resp, err := browser.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		start := get(s.URL + "/auth/dev/login?site=triad&from=" + url.QueryEscape(from))
		authorize, err := url.Parse(start.Header.Get("Location"))
		if start.StatusCode != http.StatusFound || err != nil {
			t.Fatalf("login: %d to %q, want 302 to the dev provider", start.StatusCode, start.Header.Get("Location"))
		}
		q := authorize.Query()
		if got, want := q.Get("redirect_uri"), s.URL+"/auth/dev/callback"; got != want {
			t.Fatalf("the dev provider is to send the browser back to %q, want %q (the address listened on)", got, want)
		}
		back, err := browser.PostForm(authorize.String(), url.Values{"username": {user}, "state": {q.Get("state")},
			"redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}})
		if err != nil {
			t.Fatal(err)
		}
		back.Body.Close()
		if back.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back.Header.Get("Location"), s.URL+"/auth/dev/callback?") {
			t.Fatalf("dev provider answered %d to %q; want 303 to this server's callback", back.StatusCode, back.Header.Get("Location"))
		}
		return get(back.Header.Get("Location"))
	}
	newBrowser := func() *http.Client {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}

	spa := "http://localhost:5173/account?tab=profile"
	browser := newBrowser()
	done := login(t, browser, "dana", spa)
	if done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != spa {
		t.Fatalf("callback: %d to %q; want 303 back to the SPA's dev server %s", done.StatusCode, done.Header.Get("Location"), spa)
	}
	req, _ := http.NewRequest("GET", s.URL+"/auth/user", nil)
	base, _ := url.Parse(s.URL)
	for _, c := range browser.Jar.Cookies(base) {
		if c.Name == "XSRF-TOKEN" {
			req.Header.Set("X-XSRF-TOKEN", c.Value)
		}
	}
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var user struct{ Name, Picture string }
	err = json.NewDecoder(resp.Body).Decode(&user)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || user.Name != "dana" {
		t.Fatalf("GET /auth/user after the login: %d %v %+v", resp.StatusCode, err, user)
	}
	if !strings.HasPrefix(user.Picture, s.URL+"/avatar/") {
		t.Fatalf("avatar link %q does not point at this server (%s)", user.Picture, s.URL)
	}
	pic, err := http.Get(user.Picture)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, pic.Body)
	pic.Body.Close()
	if pic.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", user.Picture, pic.StatusCode)
	}

	// Only the dev servers' origins join AUTH_URL's: a foreign `from` is not followed (the login
	// answers the user as JSON instead).
	foreign := login(t, newBrowser(), "erin", "http://evil.example/steal")
	if foreign.StatusCode != http.StatusOK || foreign.Header.Get("Location") != "" {
		t.Fatalf("callback with a foreign from: %d to %q; want 200 without a redirect", foreign.StatusCode, foreign.Header.Get("Location"))
	}
}
