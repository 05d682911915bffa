package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// Logout ends the session on every replica: two servers on one database; a user logs in on the
// first, and the JWT (as X-JWT, and as the cookie with its XSRF header) works on both; after POST
// /auth/logout on the first, the second refuses the captured token within a second (each server
// holds the revocations in memory, told by LISTEN/NOTIFY), and so does the first at once.
func TestServer_LogoutRevokesOnEveryReplica(t *testing.T) {
	t.Parallel()
	args := []string{"-mode", "dev", "-database-url", dbtest.NewURL(t), "-auth-dev-port", "0"}
	a, _ := routerServer(t, args...)
	b, _ := routerServer(t, args...)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.Post(a+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var jwt, xsrf string
	for _, c := range resp.Cookies() {
		switch c.Name {
		case "JWT":
			jwt = c.Value
		case "XSRF-TOKEN":
			xsrf = c.Value
		}
	}
	if resp.StatusCode != http.StatusOK || jwt == "" || xsrf == "" {
		t.Fatalf("login: %d, JWT %q, XSRF %q", resp.StatusCode, jwt, xsrf)
	}
	user := func(base string, cookie bool) int {
		req, _ := http.NewRequest("GET", base+"/auth/user", nil)
		if cookie {
			req.Header.Set("Cookie", "JWT="+jwt+"; XSRF-TOKEN="+xsrf)
			req.Header.Set("X-XSRF-TOKEN", xsrf)
		} else {
			req.Header.Set("X-JWT", jwt)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, base := range []string{a, b} {
		if h, c := user(base, false), user(base, true); h != http.StatusOK || c != http.StatusOK {
			t.Fatalf("%s before logout: X-JWT %d, cookie %d", base, h, c)
		}
	}

	req, _ := http.NewRequest("POST", a+"/auth/logout", nil)
	req.Header.Set("X-XSRF-TOKEN", xsrf)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	loggedOut := time.Now()
	if h, c := user(a, false), user(a, true); h != http.StatusUnauthorized || c != http.StatusUnauthorized {
		t.Fatalf("the logging-out server right after: X-JWT %d, cookie %d; want 401", h, c)
	}
	for user(b, false) != http.StatusUnauthorized || user(b, true) != http.StatusUnauthorized {
		if time.Since(loggedOut) > time.Second {
			t.Fatalf("the other server still accepts the logged-out token %v after the logout", time.Since(loggedOut))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("refused by the other server %v after the logout", time.Since(loggedOut))
}
