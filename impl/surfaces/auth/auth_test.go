package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func TestHandlers_ListStatusUserLogout(t *testing.T) {
	t.Parallel()
	s := newSite(t)

	st, h, b := s.get("/auth/list", nil)
	var names []string
	mustJSON(t, b, &names)
	if st != 200 || !slices.Equal(names, []string{"dev", "local"}) {
		t.Fatalf("list: %d %s", st, b)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("security headers missing: %v", h)
	}

	st, _, b = s.get("/auth/status", nil)
	if st != 200 || string(b) != `{"status":"not logged in"}`+"\n" {
		t.Fatalf("status before login: %d %s", st, b)
	}
	if st, _, b = s.get("/auth/user", nil); st != 401 || errCode(t, b) != "unauthorized" {
		t.Fatalf("user before login: %d %s", st, b)
	}

	u := s.directLogin("")
	if u.Name != "demo" || u.ID != token.UserID("local", "demo") {
		t.Fatalf("user %+v", u)
	}
	st, _, b = s.get("/auth/user", s.xsrf())
	var got token.User
	mustJSON(t, b, &got)
	if st != 200 || got.ID != u.ID {
		t.Fatalf("user: %d %s", st, b)
	}
	st, _, b = s.get("/auth/status", s.xsrf())
	if st != 200 || string(b) != `{"status":"logged in","user":"demo"}`+"\n" {
		t.Fatalf("status: %d %s", st, b)
	}

	for _, path := range []string{"/auth/logout", "/auth/local/logout"} {
		s.directLogin("")
		st, h, b = s.do(s.client, http.MethodPost, path, nil, nil)
		if st != 200 || !strings.Contains(string(b), "logged out") || len(h.Values("Set-Cookie")) != 2 {
			t.Fatalf("%s: %d %s %v", path, st, b, h)
		}
		if s.cookie("JWT") != "" || s.cookie("XSRF-TOKEN") != "" {
			t.Fatalf("%s left cookies", path)
		}
		if st, _, _ = s.get("/auth/user", s.xsrf()); st != 401 {
			t.Fatalf("after %s user is %d", path, st)
		}
	}

	long := map[string]string{"X-XSRF-TOKEN": strings.Repeat("x", 257)}
	for _, path := range []string{"/auth/user", "/auth/status"} {
		if st, _, b := s.get(path, long); st != 400 || errCode(t, b) != "validation_failed" {
			t.Fatalf("%s with an over-long XSRF header: %d %s", path, st, b)
		}
	}

	for _, path := range []string{"/auth/nope/login", "/auth/nope/callback", "/auth/nope/logout"} {
		if st, _, b = s.get(path, nil); st != 400 || errCode(t, b) != auth.CodeUnknownProvider {
			t.Fatalf("%s: %d %s", path, st, b)
		}
	}
}

func TestDirect_Login(t *testing.T) {
	t.Parallel()
	form := "application/x-www-form-urlencoded"
	js := "application/json"
	tests := []struct {
		name, method, query, ctype, body string
		want                             int
		wantCode                         string
		session                          bool
	}{
		{"form", "POST", "", form, "user=demo&passwd=demo-password", 200, "", false},
		{"json", "POST", "", js, `{"user":"demo","passwd":"demo-password","aud":"triad"}`, 200, "", false},
		{"query", "GET", "?user=demo&passwd=demo-password", "", "", 200, "", false},
		{"session cookie", "POST", "?session=1", js, `{"user":"demo","passwd":"demo-password"}`, 200, "", true},
		{"session 0", "POST", "?session=0", form, "user=demo&passwd=demo-password", 200, "", false},
		{"wrong password", "POST", "", js, `{"user":"demo","passwd":"nope"}`, 403, "bad_credentials", false},
		{"wrong user", "GET", "?user=eve&passwd=demo-password", "", "", 403, "bad_credentials", false},
		{"missing password", "POST", "", form, "user=demo", 400, "bad_request", false},
		{"bad json", "POST", "", js, `{"user":`, 400, "bad_request", false},
		{"unsupported type", "POST", "", "text/plain", "user=demo", 415, "unsupported_media_type", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			hdr := map[string]string{}
			if tt.ctype != "" {
				hdr["Content-Type"] = tt.ctype
			}
			st, h, b := s.do(s.client, tt.method, "/auth/local/login"+tt.query, strings.NewReader(tt.body), hdr)
			if st != tt.want {
				t.Fatalf("status %d, want %d: %s", st, tt.want, b)
			}
			if tt.want != 200 {
				if errCode(t, b) != tt.wantCode {
					t.Fatalf("code: %s", b)
				}
				if s.cookie("JWT") != "" {
					t.Fatal("a refused login set a cookie")
				}
				return
			}
			var u token.User
			mustJSON(t, b, &u)
			if u.Name != "demo" || u.ID != token.UserID("local", "demo") {
				t.Fatalf("user %+v", u)
			}
			cookies := (&http.Response{Header: h}).Cookies()
			if len(cookies) != 2 {
				t.Fatalf("cookies %v", cookies)
			}
			for _, c := range cookies {
				if (c.MaxAge == 0) != tt.session {
					t.Errorf("cookie %s MaxAge %d, session %v", c.Name, c.MaxAge, tt.session)
				}
				if c.Path != "/" || c.SameSite != http.SameSiteLaxMode {
					t.Errorf("cookie %s: %+v", c.Name, c)
				}
				if c.HttpOnly != (c.Name == "JWT") {
					t.Errorf("cookie %s HttpOnly=%v", c.Name, c.HttpOnly)
				}
			}
			if st, _, _ := s.get("/auth/user", s.xsrf()); st != 200 {
				t.Fatalf("user after login: %d", st)
			}
		})
	}
}

// forge signs arbitrary claims with a key and method, bypassing the service.
func forge(t *testing.T, method jwt.SigningMethod, key any, c token.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validClaims(id string) token.Claims {
	now := time.Now()
	u := token.User{Name: "demo", ID: token.UserID("local", "demo")}
	return token.Claims{RegisteredClaims: jwt.RegisteredClaims{ID: id, Issuer: auth.DefaultIssuer, IssuedAt: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}, User: &u, AuthTime: now.Unix()}
}

func TestAuth_RefusesBadTokens(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.Audiences = []string{"triad", ""} })
	key := []byte(testSecret)
	ok := forge(t, jwt.SigningMethodHS256, key, validClaims("id1"))
	parts := strings.Split(ok, ".")

	expired := validClaims("id2")
	expired.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
	wrongAud := validClaims("id3")
	wrongAud.Audience = jwt.ClaimStrings{"alien"}
	wrongIss := validClaims("id4")
	wrongIss.Issuer = "someone-else"
	ghost := validClaims("id5")
	ghost.User = &token.User{Name: "x", ID: token.UserID("github", "x")} // provider not registered here
	noUser := validClaims("id6")
	noUser.User = nil
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	// A payload changed after signing: claims the admin role.
	tampered := validClaims("id1")
	tampered.User.Role = "admin"
	tamperedPayload := strings.Split(forge(t, jwt.SigningMethodHS256, []byte("other"), tampered), ".")[1]

	tests := []struct {
		name string
		tok  string
	}{
		{"tampered payload", parts[0] + "." + tamperedPayload + "." + parts[2]},
		{"tampered signature", parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte("not the signature at all, nope"))},
		{"wrong secret", forge(t, jwt.SigningMethodHS256, []byte("another-secret-0123456789abcdef"), validClaims("id1"))},
		{"alg none", forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, validClaims("id1"))},
		{"alg HS512", forge(t, jwt.SigningMethodHS512, key, validClaims("id1"))},
		{"alg ES256", forge(t, jwt.SigningMethodES256, ecKey, validClaims("id1"))},
		{"expired", forge(t, jwt.SigningMethodHS256, key, expired)},
		{"wrong aud", forge(t, jwt.SigningMethodHS256, key, wrongAud)},
		{"wrong issuer", forge(t, jwt.SigningMethodHS256, key, wrongIss)},
		{"unregistered provider", forge(t, jwt.SigningMethodHS256, key, ghost)},
		{"no user", forge(t, jwt.SigningMethodHS256, key, noUser)},
		{"garbage", "abc.def.ghi"},
	}
	// The control: the untampered token is accepted in both header and query.
	if st, _, b := s.get("/auth/user", map[string]string{"X-JWT": ok}); st != 200 {
		t.Fatalf("valid header token refused: %d %s", st, b)
	}
	if st, _, b := s.get("/auth/user?token="+ok, nil); st != 200 {
		t.Fatalf("valid query token refused: %d %s", st, b)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if st, _, b := s.get("/auth/user", map[string]string{"X-JWT": tt.tok}); st != 401 || errCode(t, b) != "unauthorized" {
				t.Errorf("header: %d %s", st, b)
			}
			if st, _, b := s.get("/auth/user?token="+url.QueryEscape(tt.tok), nil); st != 401 {
				t.Errorf("query: %d %s", st, b)
			}
			if st, _, b := s.do(s.plain, http.MethodGet, "/app/private", nil, map[string]string{"X-JWT": tt.tok}); st != 401 {
				t.Errorf("middleware: %d %s", st, b)
			}
		})
	}
}

func TestAuth_CookieNeedsXSRF(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	s.directLogin("")
	tests := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"matching header", s.xsrf(), 200},
		{"missing header", nil, 401},
		{"wrong header", map[string]string{"X-XSRF-TOKEN": "guess"}, 401},
		{"empty header", map[string]string{"X-XSRF-TOKEN": ""}, 401},
	}
	for _, tt := range tests {
		if st, _, b := s.get("/auth/user", tt.hdr); st != tt.want {
			t.Errorf("%s: user %d %s", tt.name, st, b)
		}
		if st, _, b := s.do(s.plain, http.MethodPost, "/app/private", nil, tt.hdr); st != tt.want {
			t.Errorf("%s: POST private %d %s", tt.name, st, b)
		}
	}
}

func TestAuth_XSRFIgnoreMethods(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.XSRFIgnoreMethods = []string{http.MethodGet} })
	s.directLogin("")
	if st, _, b := s.do(s.plain, http.MethodGet, "/app/private", nil, nil); st != 200 {
		t.Fatalf("GET without XSRF: %d %s", st, b)
	}
	if st, _, _ := s.do(s.plain, http.MethodPost, "/app/private", nil, nil); st != 401 {
		t.Fatalf("POST without XSRF: %d", st)
	}
}

func TestAuth_RefreshesExpiredCookie(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var validated atomic.Value
	s := newSite(t, func(o *auth.Options) {
		o.CookieDuration = time.Hour
		o.Validator = token.ValidatorFunc(func(tok string, _ token.Claims) bool { validated.Store(tok); return true })
		o.ClaimsUpdater = token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			calls.Add(1)
			c.User.SetStrAttr("refreshed", "yes")
			return c
		})
	})
	key := []byte(testSecret)
	u, _ := url.Parse(s.srv.URL)
	setCookies := func(tok, id string) {
		s.jar.SetCookies(u, []*http.Cookie{{Name: "JWT", Value: tok, Path: "/"}, {Name: "XSRF-TOKEN", Value: id, Path: "/"}})
	}

	c := validClaims("refresh-me")
	c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
	c.AuthTime = time.Now().Add(-10 * time.Minute).Unix()
	setCookies(forge(t, jwt.SigningMethodHS256, key, c), "refresh-me")
	st, h, b := s.get("/auth/user", map[string]string{"X-XSRF-TOKEN": "refresh-me"})
	if st != 200 || calls.Load() != 1 {
		t.Fatalf("refresh: %d %s (updater calls %d)", st, b, calls.Load())
	}
	var got token.User
	mustJSON(t, b, &got)
	if got.StrAttr("refreshed") != "yes" {
		t.Fatalf("claims updater not applied: %+v", got)
	}
	fresh, err := s.svc.TokenService().Parse(s.cookie("JWT"))
	if err != nil || fresh.ID != "refresh-me" || fresh.AuthTime != c.AuthTime || len(h.Values("Set-Cookie")) != 2 {
		t.Fatalf("refreshed token: %v %+v %v", err, fresh, h)
	}
	if validated.Load() != s.cookie("JWT") {
		t.Fatal("the validator did not see the refreshed token")
	}

	// Past the cookie lifetime, counted from the login, no refresh.
	old := validClaims("too-old")
	old.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
	old.AuthTime = time.Now().Add(-2 * time.Hour).Unix()
	setCookies(forge(t, jwt.SigningMethodHS256, key, old), "too-old")
	if st, _, b := s.get("/auth/user", map[string]string{"X-XSRF-TOKEN": "too-old"}); st != 401 {
		t.Fatalf("stale cookie refreshed: %d %s", st, b)
	}
	// An expired header token is never refreshed.
	if st, _, _ := s.get("/auth/user", map[string]string{"X-JWT": forge(t, jwt.SigningMethodHS256, key, c)}); st != 401 {
		t.Fatalf("expired header token accepted: %d", st)
	}
	// Nor is an expired cookie without its XSRF header.
	setCookies(forge(t, jwt.SigningMethodHS256, key, c), "refresh-me")
	if st, _, _ := s.get("/auth/user", nil); st != 401 {
		t.Fatalf("expired cookie without XSRF refreshed: %d", st)
	}

	// A session-only login is refreshed as well, and its new cookies are session cookies again.
	sess := validClaims("session-login")
	sess.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
	sess.AuthTime = time.Now().Add(-10 * time.Minute).Unix()
	sess.SessionOnly = true
	setCookies(forge(t, jwt.SigningMethodHS256, key, sess), "session-login")
	st, h, b = s.get("/auth/user", map[string]string{"X-XSRF-TOKEN": "session-login"})
	if st != 200 {
		t.Fatalf("session-only refresh: %d %s", st, b)
	}
	cookies := (&http.Response{Header: h}).Cookies()
	if len(cookies) != 2 {
		t.Fatalf("session-only refresh cookies: %v", cookies)
	}
	for _, ck := range cookies {
		if ck.MaxAge != 0 || !ck.Expires.IsZero() {
			t.Fatalf("refreshed session cookie became persistent: %+v", ck)
		}
	}
	if fresh, err := s.svc.TokenService().Parse(s.cookie("JWT")); err != nil || !fresh.SessionOnly || fresh.ID != "session-login" {
		t.Fatalf("refreshed session token: %v %+v", err, fresh)
	}
}

// TestOptions_Defaults: with only SecretReader and URL set, a login gives a 15-minute HS256 token
// with iss, iat, exp and jti, in a JWT cookie living 31 days, next to an XSRF-TOKEN cookie holding
// the jti, both SameSite=Lax, not Secure.
func TestOptions_Defaults(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	st, h, b := s.do(s.client, http.MethodPost, "/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`),
		map[string]string{"Content-Type": "application/json"})
	if st != 200 {
		t.Fatalf("login: %d %s", st, b)
	}
	cookies := map[string]*http.Cookie{}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		cookies[c.Name] = c
	}
	jc, xc := cookies["JWT"], cookies["XSRF-TOKEN"]
	if jc == nil || xc == nil {
		t.Fatalf("cookies %v", cookies)
	}
	const month = 31 * 24 * 60 * 60
	for _, c := range []*http.Cookie{jc, xc} {
		if c.MaxAge != month || c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
			t.Errorf("cookie %s: %+v", c.Name, c)
		}
	}
	if !jc.HttpOnly || xc.HttpOnly {
		t.Errorf("HttpOnly: JWT %v, XSRF-TOKEN %v", jc.HttpOnly, xc.HttpOnly)
	}
	hdr, _, _ := strings.Cut(jc.Value, ".")
	if raw, _ := base64.RawURLEncoding.DecodeString(hdr); !strings.Contains(string(raw), `"alg":"HS256"`) {
		t.Errorf("header %s", raw)
	}
	c, err := s.svc.TokenService().Parse(jc.Value)
	if err != nil {
		t.Fatal(err)
	}
	if c.ExpiresAt.Sub(c.IssuedAt.Time) != 15*time.Minute || c.Issuer != auth.DefaultIssuer || c.ID != xc.Value || c.ID == "" {
		t.Fatalf("claims %+v", c)
	}
}

// TestOptions_CookieFlags: SecureCookies and SameSite reach both cookies, on login and on logout.
func TestOptions_CookieFlags(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.SecureCookies = true
		o.SameSite = http.SameSiteStrictMode
		o.CookieDuration = 2 * time.Hour
	})
	check := func(step string, h http.Header) {
		t.Helper()
		cookies := (&http.Response{Header: h}).Cookies()
		if len(cookies) != 2 {
			t.Fatalf("%s: cookies %v", step, cookies)
		}
		for _, c := range cookies {
			if !c.Secure || c.SameSite != http.SameSiteStrictMode {
				t.Errorf("%s: cookie %+v", step, c)
			}
			if step == "login" && c.MaxAge != 2*60*60 {
				t.Errorf("login: cookie %s MaxAge %d", c.Name, c.MaxAge)
			}
		}
	}
	_, h, _ := s.do(s.client, http.MethodPost, "/auth/local/login", strings.NewReader("user=demo&passwd=demo-password"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	check("login", h)
	_, h, _ = s.do(s.client, http.MethodPost, "/auth/logout", nil, nil)
	check("logout", h)
}

func TestAuth_Audiences(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.Audiences = []string{"triad"} })
	st, _, b := s.do(s.client, http.MethodPost, "/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password","aud":"alien"}`), map[string]string{"Content-Type": "application/json"})
	if st != 403 || errCode(t, b) != "audience_not_allowed" || s.cookie("JWT") != "" {
		t.Fatalf("alien aud: %d %s", st, b)
	}
	if st, _, b := s.get("/auth/dev/login?site=alien", nil); st != 403 || errCode(t, b) != "audience_not_allowed" {
		t.Fatalf("dev alien site: %d %s", st, b)
	}
	if _, err := s.svc.TokenService().Token(validClaims("x")); err == nil {
		t.Fatal("token for the empty aud created although Audiences is set")
	}
	st, _, b = s.do(s.client, http.MethodPost, "/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password","aud":"triad"}`), map[string]string{"Content-Type": "application/json"})
	var u token.User
	mustJSON(t, b, &u)
	if st != 200 || u.Audience != "triad" {
		t.Fatalf("allowed aud: %d %s", st, b)
	}
}

func TestAuth_SecretByAudience(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.SecretReader = token.SecretFunc(func(aud string) (string, error) { return testSecret + "-" + aud, nil })
	})
	a := validClaims("a")
	a.Audience = jwt.ClaimStrings{"site-a"}
	// Signed with site-b's secret but claiming site-a: refused.
	if st, _, _ := s.get("/auth/user", map[string]string{"X-JWT": forge(t, jwt.SigningMethodHS256, []byte(testSecret+"-site-b"), a)}); st != 401 {
		t.Fatalf("cross-audience secret accepted: %d", st)
	}
	if st, _, b := s.get("/auth/user", map[string]string{"X-JWT": forge(t, jwt.SigningMethodHS256, []byte(testSecret+"-site-a"), a)}); st != 200 {
		t.Fatalf("own secret refused: %d %s", st, b)
	}
}

// TestAvatar_ProxyAccessor: AvatarProxy is nil without a store; with one, a picture stored through
// it (an identicon for a user logged in some other way) is served at the link it returns.
func TestAvatar_ProxyAccessor(t *testing.T) {
	t.Parallel()
	if p := newSite(t).svc.AvatarProxy(); p != nil {
		t.Fatalf("proxy without a store: %v", p)
	}
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	s := newSite(t, func(o *auth.Options) { o.AvatarStore = store })
	link, err := s.svc.AvatarProxy().Put(t.Context(), "sso_1", "")
	if err != nil || link != s.srv.URL+"/avatar/"+avatar.AvatarID("sso_1") {
		t.Fatalf("Put: %q %v", link, err)
	}
	if st, h, _ := s.get(strings.TrimPrefix(link, s.srv.URL), nil); st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/") {
		t.Fatalf("stored avatar: %d %s", st, h.Get("Content-Type"))
	}
}

func TestAvatar_ProxiedAtLogin(t *testing.T) {
	t.Parallel()
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	s := newSite(t, func(o *auth.Options) { o.AvatarStore = store })
	u := s.directLogin("")
	want := s.srv.URL + "/avatar/" + avatar.AvatarID(u.ID)
	if u.Picture != want {
		t.Fatalf("picture %q, want %q", u.Picture, want)
	}
	st, h, b := s.get(strings.TrimPrefix(u.Picture, s.srv.URL), nil)
	if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/") || len(b) == 0 {
		t.Fatalf("avatar: %d %s", st, h.Get("Content-Type"))
	}
	if st, _, b := s.get("/avatar/0000000000000000000000000000000000000000.image", nil); st != 404 || errCode(t, b) != "not_found" {
		t.Fatalf("unknown avatar: %d %s", st, b)
	}
}
