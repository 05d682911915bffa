package httpapi

import (
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/cookiejar"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestMount_DevWiring mounts the surface in dev mode and logs in with the documented demo
// credentials of the direct provider.
func TestMount_DevWiring(t *testing.T) {
	t.Parallel()
	base := serve(t, dbtest.NewURL(t), true, Settings{})
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.Client(t, spec)
	c.Jar, _ = cookiejar.New(nil)
	do := func(method, path, ctype, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := do("GET", "/auth/list", "", ""); st != 200 || b != `["dev","local"]`+"\n" {
		t.Fatalf("list: %d %s", st, b)
	}
	// The spec-driven validator refuses a body without passwd before the library sees it.
	if st, b := do("POST", "/auth/local/login", "application/json", `{"user":"demo"}`); st != 400 || !strings.Contains(b, "validation_failed") {
		t.Fatalf("invalid body: %d %s", st, b)
	}
	if st, b := do("POST", "/auth/local/login", "application/json", `{"user":"demo","passwd":"wrong"}`); st != 403 {
		t.Fatalf("wrong password: %d %s", st, b)
	}
	st, b := do("POST", "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
	if st != 200 || !strings.Contains(b, `"name":"demo"`) {
		t.Fatalf("demo login: %d %s", st, b)
	}
	// The picture is an identicon proxied through the avatar store, served under /avatar of this
	// very server: without AUTH_URL, dev mode's public URL is the address listened on.
	var user struct{ Picture string }
	if err := json.Unmarshal([]byte(b), &user); err != nil || !strings.HasPrefix(user.Picture, base+"/avatar/") {
		t.Fatalf("picture: %v %q, want it under %s/avatar/", err, user.Picture, base)
	}
	checkAvatarRoute(t, c, user.Picture)
	u, _ := url.Parse(base)
	xsrf := ""
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "XSRF-TOKEN" {
			xsrf = ck.Value
		}
	}
	if st, b := do("GET", "/auth/status", "", "", "X-XSRF-TOKEN", xsrf); st != 200 || !strings.Contains(b, `"user":"demo"`) {
		t.Fatalf("status: %d %s", st, b)
	}
	// The dev provider redirects to its own (ephemeral) OAuth2 server.
	if st, _ := do("GET", "/auth/dev/login", "", ""); st != http.StatusFound {
		t.Fatalf("dev login: %d", st)
	}

	resp, err := c.Get(base + "/auth")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "triad auth") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "nonce-") {
		t.Fatalf("login page: %d %s", resp.StatusCode, page)
	}
}

// TestMount_EmailVerifiedLogin runs the reference wiring's "email" verified provider against a
// real SMTP server: the confirmation arrives as a MIME e-mail, its token logs in once, on whichever
// of two instances sharing the database it is replayed.
func TestMount_EmailVerifiedLogin(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t, smtptest.Options{})
	dbURL := dbtest.NewURL(t)
	s := Settings{SMTP: SMTP{Host: mail.Host, Port: mail.Port, From: "triad <noreply@example.com>"}}
	base := serve(t, dbURL, true, s)
	// A second instance on the same database: a replica behind the same load balancer.
	replica := serve(t, dbURL, true, s)
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.Client(t, spec)
	c.Jar, _ = cookiejar.New(nil)
	getAt := func(base, path string) (int, string) {
		t.Helper()
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get := func(path string) (int, string) { t.Helper(); return getAt(base, path) }
	if st, b := get("/auth/email/login?user=alice&address=alice@example.com&aud=triad"); st != 200 || !strings.Contains(b, `"status":"sent"`) {
		t.Fatalf("send: %d %s", st, b)
	}
	msgs := mail.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages delivered, want 1", len(msgs))
	}
	to, data := msgs[0].To, msgs[0].Data
	msg, err := netmail.ReadMessage(strings.NewReader(data))
	if err != nil {
		t.Fatalf("not a mail message: %v\n%s", err, data)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre>([A-Za-z0-9_\-.]+)</pre>`).FindStringSubmatch(string(body))
	if to != "alice@example.com" || !strings.HasPrefix(msg.Header.Get("Content-Type"), "text/html") || m == nil ||
		!strings.Contains(string(body), "Hello alice") || !strings.Contains(string(body), "login to triad") {
		t.Fatalf("message to %s: %v\n%s", to, msg.Header, body)
	}
	st, b := get("/auth/email/login?token=" + m[1])
	if st != 200 || !strings.Contains(b, `"email":"alice@example.com"`) || !strings.Contains(b, `"name":"alice"`) {
		t.Fatalf("confirm: %d %s", st, b)
	}
	if st, b := getAt(replica, "/auth/email/login?token="+m[1]); st != 403 || !strings.Contains(b, "confirmation_used") {
		t.Fatalf("replay on the other instance: %d %s", st, b)
	}
	if st, b := get("/auth/email/login?token=" + m[1]); st != 403 || !strings.Contains(b, "confirmation_used") {
		t.Fatalf("replay: %d %s", st, b)
	}
}

// checkAvatarRoute requests a saved avatar through the whole server (spec validation included) the
// ways browsers, caches and link checkers do, each answer validated against api/auth.yaml by c.
func checkAvatarRoute(t *testing.T, c *http.Client, avatarURL string) {
	t.Helper()
	req := func(method, u string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		r, _ := http.NewRequest(method, u, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, img := req("GET", avatarURL)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") || len(img) == 0 ||
		etag == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") == "" {
		t.Fatalf("avatar GET: %d %v (%d bytes)", resp.StatusCode, resp.Header, len(img))
	}
	if resp, _ := req("GET", avatarURL, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != etag {
		t.Fatalf("conditional GET: %d, ETag %q; want 304 with %q", resp.StatusCode, resp.Header.Get("ETag"), etag)
	}
	resp, body := req("HEAD", avatarURL)
	if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("ETag") != etag ||
		resp.Header.Get("Content-Type") != http.DetectContentType(img) {
		t.Fatalf("HEAD: %d %v, %d body bytes; want GET's headers and no body", resp.StatusCode, resp.Header, len(body))
	}
	if resp, _ := req("HEAD", avatarURL, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional HEAD: %d, want 304", resp.StatusCode)
	}
	missing := avatarURL[:strings.LastIndex(avatarURL, "/")+1] + strings.Repeat("0", 40) + ".image"
	for _, m := range []string{"GET", "HEAD"} {
		if resp, body := req(m, missing); resp.StatusCode != 404 || (m == "GET" && !strings.Contains(string(body), `"not_found"`)) {
			t.Fatalf("%s unknown avatar: %d %s", m, resp.StatusCode, body)
		}
	}
}

// TestMount_CookieDomain: with a cookie domain the login's JWT and XSRF-TOKEN cookies, and
// the logout's clearing ones, carry Domain=, so a page on a sibling host (app.example.test) reads
// XSRF-TOKEN set by the API's host (api.example.test); without it they stay host-only.
func TestMount_CookieDomain(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	for _, tc := range []struct {
		name   string
		s      Settings
		domain string
	}{
		{"configured", Settings{URL: "https://api.example.test", CookieDomain: "example.test"}, "example.test"},
		{"unset", Settings{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := serve(t, dbURL, true, tc.s)
			// No cookie jar: the test reads Set-Cookie as the server wrote it.
			post := func(path, body string) *http.Response {
				t.Helper()
				resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST %s: %d", path, resp.StatusCode)
				}
				return resp
			}
			login := post("/auth/"+DevDirectProvider+"/login", `{"user":"`+DevDirectUser+`","passwd":"`+DevDirectPassword+`"}`)
			logout := post("/auth/logout", "")
			for what, resp := range map[string]*http.Response{"login": login, "logout": logout} {
				seen := map[string]bool{}
				for _, ck := range resp.Cookies() {
					seen[ck.Name] = true
					// The device cookie is host-only on purpose: only this host's logins read it.
					if ck.Domain != tc.domain && ck.Name != loginlimit.DeviceCookie {
						t.Errorf("%s: cookie %s has Domain %q, want %q", what, ck.Name, ck.Domain, tc.domain)
					}
				}
				if !seen["JWT"] || !seen["XSRF-TOKEN"] {
					t.Errorf("%s set cookies %v, want JWT and XSRF-TOKEN", what, resp.Header.Values("Set-Cookie"))
				}
			}
		})
	}
}
