package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestBinary_AccessLogNamesTheUser: the access log line of a request names its authenticated user
// (an orders bearer token, a brands bearer token, an auth cookie) by id, and an anonymous request's
// line has no user field.
func TestBinary_AccessLogNamesTheUser(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "dev", "-database-url", dbtest.NewURL(t), "-auth-dev-port", "0", "-log-level", "debug")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	// do sends a request tagged with request id rid and decodes a JSON answer into out.
	do := func(rid, method, path, ctype, body string, out any, hdr ...string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		req.Header.Set("X-Request-Id", rid)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, b)
			}
		}
	}

	// orders: alice's token, then a request that needs it.
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	do("orders-login", "POST", "/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"password"},
		"client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}}.Encode(), &tok)
	var alice struct{ ID int64 }
	do("orders-user", "GET", "/authenticated", "", "", &alice, "Authorization", "Bearer "+tok.AccessToken)

	// brands: the demo user's token, then /api/user/me.
	var btok struct{ Token string }
	do("brands-login", "POST", "/api/user/login", "application/x-www-form-urlencoded",
		url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}.Encode(), &btok)
	var demo struct {
		ID string `json:"_id"`
	}
	do("brands-user", "GET", "/api/user/me", "", "", &demo, "Authorization", "Bearer "+btok.Token)

	// auth: the demo user's cookie, then /auth/user.
	do("auth-login", "POST", "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`, nil)
	u, _ := url.Parse(s.base)
	xsrf := ""
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "XSRF-TOKEN" {
			xsrf = ck.Value
		}
	}
	var au struct{ ID string }
	do("auth-user", "GET", "/auth/user", "", "", &au, "X-XSRF-TOKEN", xsrf)

	do("anonymous", "GET", "/api/brand/list", "", "", nil)

	if alice.ID == 0 || demo.ID == "" || au.ID == "" {
		t.Fatalf("ids: orders %d, brands %q, auth %q", alice.ID, demo.ID, au.ID)
	}
	want := map[string]string{
		"orders-user": jsonNumber(alice.ID),
		"brands-user": demo.ID,
		"auth-user":   au.ID,
		"anonymous":   "",
	}
	waitFor(t, func() bool { return strings.Contains(s.log.String(), "request_id=anonymous") })
	logs := s.log.String()
	for rid, id := range want {
		line := regexp.MustCompile(`(?m)^.*msg=request request_id=` + rid + ` .*$`).FindString(logs)
		if line == "" {
			t.Errorf("no access log line for %s in:\n%s", rid, logs)
			continue
		}
		got := ""
		if m := regexp.MustCompile(` user=(\S+)`).FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != id {
			t.Errorf("%s: user %q, want %q: %s", rid, got, id, line)
		}
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestBinary_AccessLogIsJSONInProd: in prod every line the binary writes is a JSON object, and a
// request's line is at info with the documented fields (docs/operations.md): request id, method,
// route pattern (not the path), status, duration, client (the one a trusted proxy names) and user.
func TestBinary_AccessLogIsJSONInProd(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef",
		"-brands-admin-email", "boss@example.com", "-brands-admin-password", "boss-password-of-prod",
		"-trusted-proxies", "127.0.0.1")
	resp, err := http.PostForm(s.base+"/api/user/login", url.Values{"email": {"boss@example.com"}, "password": {"boss-password-of-prod"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ Token string }
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.Token == "" {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest(http.MethodGet, s.base+"/api/user/me", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("X-Request-Id", "prod-me")
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var me struct {
		ID string `json:"_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if err != nil || me.ID == "" {
		t.Fatalf("me: %d %v", resp.StatusCode, err)
	}

	waitFor(t, func() bool { return strings.Contains(s.log.String(), `"prod-me"`) })
	var line map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(s.log.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("a prod log line is not JSON (%v): %s", err, raw)
		}
		if l["msg"] == "request" && l["request_id"] == "prod-me" {
			line = l
		}
	}
	if line == nil {
		t.Fatalf("no access log line for request prod-me in:\n%s", s.log.String())
	}
	want := map[string]any{
		"level": "INFO", "method": "GET", "route": "/api/user/me", "status": float64(200),
		"client": "203.0.113.7:0", "user": me.ID,
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %#v, want %#v in %v", k, line[k], v, line)
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d <= 0 {
		t.Errorf("duration_ms = %#v, want a positive number in %v", line["duration_ms"], line)
	}
}
