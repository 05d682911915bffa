package auth_test

import (
	"crypto/sha1"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// goPkgzCookie is a session token shaped as go-pkgz/auth v2 writes it: aud as a plain string
// (it turns off golang-jwt's single-string-as-array), iss "go-pkgz/auth", no auth_time, the
// provider in auth_provider, and the dev provider's raw user name as the user id.
func goPkgzCookie(t *testing.T, iat, exp time.Time) string {
	t.Helper()
	c := jwt.MapClaims{
		"aud": "my-site", "iss": "go-pkgz/auth", "jti": "0123456789abcdef0123456789abcdef01234567",
		"iat": iat.Unix(), "exp": exp.Unix(),
		"user":          map[string]any{"name": "dev_user", "id": "dev_user", "picture": "http://127.0.0.1:8080/avatar/x.image"},
		"auth_provider": map[string]any{"name": "dev"},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jwtPayload(t, s), `"aud":"my-site"`) {
		t.Fatalf("aud is not a string: %s", jwtPayload(t, s))
	}
	return s
}

func jwtPayload(t *testing.T, tok string) string {
	t.Helper()
	p, err := jwt.NewParser().DecodeSegment(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// TestCompat_GoPkgzSessionCookie: a session cookie issued by go-pkgz/auth is refused by default
// (its issuer differs) and accepted once the site names that issuer in AcceptIssuers: the user
// keeps the id go-pkgz gave, and an expired one is refreshed into this library's token (our
// issuer, auth_time taken from its iat) instead of logging the user out.
func TestCompat_GoPkgzSessionCookie(t *testing.T) {
	t.Parallel()
	now := time.Now()
	fresh := goPkgzCookie(t, now, now.Add(5*time.Minute))
	expired := goPkgzCookie(t, now.Add(-time.Hour), now.Add(-time.Minute))
	xsrf := "0123456789abcdef0123456789abcdef01234567"
	send := func(s *site, tok string) (int, []byte, []*http.Cookie) {
		req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/auth/user", nil)
		req.AddCookie(&http.Cookie{Name: "JWT", Value: tok})
		req.Header.Set("X-XSRF-TOKEN", xsrf)
		resp, err := s.client.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Cookies()
	}

	plain := newSite(t)
	if st, _, _ := send(plain, fresh); st != 401 {
		t.Fatalf("go-pkgz cookie accepted without AcceptIssuers: %d", st)
	}

	s := newSite(t, func(o *auth.Options) { o.AcceptIssuers = []string{"go-pkgz/auth"} })
	st, b, _ := send(s, fresh)
	var u token.User
	mustJSON(t, b, &u)
	if st != 200 || u.ID != "dev_user" || u.Name != "dev_user" || u.Audience != "my-site" {
		t.Fatalf("go-pkgz cookie: %d %s", st, b)
	}

	st, b, cookies := send(s, expired)
	if st != 200 {
		t.Fatalf("expired go-pkgz cookie not refreshed: %d %s", st, b)
	}
	var renewed string
	for _, c := range cookies {
		if c.Name == "JWT" {
			renewed = c.Value
		}
	}
	c, err := s.svc.TokenService().Parse(renewed)
	if err != nil || c.Issuer != auth.DefaultIssuer || c.User.ID != "dev_user" || c.AuthTime != now.Add(-time.Hour).Unix() || c.Aud() != "my-site" {
		t.Fatalf("refreshed token: %v %+v", err, c)
	}

	// One issued before CookieDuration is over, counted from its iat, is not refreshed.
	short := newSite(t, func(o *auth.Options) {
		o.AcceptIssuers = []string{"go-pkgz/auth"}
		o.CookieDuration = 30 * time.Minute
	})
	if st, b, _ := send(short, expired); st != 401 {
		t.Fatalf("go-pkgz cookie refreshed past CookieDuration from its iat: %d %s", st, b)
	}
}

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestCompat_GoPkgzUserIDs: with provider.GoPkgzUserID a dev login keeps go-pkgz's raw user name
// as the id (and the session works although the id has no provider prefix), a direct login gets
// the same hashed id under both derivations, GitHub's id is hashed from the login, and a value
// already shaped like a SHA-1 is kept as go-pkgz keeps it.
func TestCompat_GoPkgzUserIDs(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.UserIDFunc = provider.GoPkgzUserID })
	st, _, b := s.devLogin("", "alice")
	var u token.User
	mustJSON(t, b, &u)
	if st != 200 || u.ID != "alice" {
		t.Fatalf("dev login: %d %s", st, b)
	}
	if st, _, b := s.do(s.plain, http.MethodGet, "/app/private", nil, s.xsrf()); st != 200 {
		t.Fatalf("session of an unprefixed id: %d %s", st, b)
	}
	if u := s.directLogin(""); u.ID != "local_"+sha1hex("demo") || u.ID != token.UserID("local", "demo") {
		t.Fatalf("direct id %q", u.ID)
	}

	// User info as the providers send it, decoded as the OAuth handlers decode it. go-pkgz reads a
	// JSON number through a float64 printed with %v: 123456789 is "1.23456789e+08".
	hashed := sha1hex("x")
	for _, tc := range []struct {
		name, rawID, info string
		want              string // what go-pkgz hashes after "<name>_"
	}{
		{"github", "583231", `{"login":"octocat","id":583231}`, "octocat"},
		{"google", "1234", `{"sub":"1234"}`, "1234"},
		{"battlenet", "123456789", `{"sub":"123456789","id":123456789,"battletag":"Hero#1"}`, "1.23456789e+08"},
		{"battlenet", "1000000", `{"sub":"1000000","id":1000000}`, "1e+06"},
		{"battlenet", "999999", `{"sub":"999999","id":999999}`, "999999"},
		// go-pkgz would hash "" (one id for everyone); the raw id is used instead.
		{"battlenet", "42", `{"sub":"42"}`, "42"},
		{"yandex", "1000034426", `{"id":"1000034426"}`, "1000034426"},
		{"yandex", "1000034426", `{"id":1000034426}`, "1.000034426e+09"},
		{"microsoft", "87d349ed", `{"id":"87d349ed"}`, "87d349ed"},
		{"telegram", "123456789", ``, "123456789"},
		{"email", hashed, ``, ""},
	} {
		var data provider.UserData
		if tc.info != "" {
			var err error
			if data, err = provider.DecodeUserData([]byte(tc.info)); err != nil {
				t.Fatal(err)
			}
		}
		want := tc.name + "_" + sha1hex(tc.want)
		if tc.want == "" {
			want = tc.name + "_" + tc.rawID // already a SHA-1: kept
		}
		if id := provider.GoPkgzUserID(tc.name, tc.rawID, data); id != want {
			t.Errorf("%s %s: id %q, want %q", tc.name, tc.info, id, want)
		}
	}
}

// TestCompat_GoPkgzDirectUserIDFunc: AddDirectProviderWithUserIDFunc gives the user-id function the
// user name and the request, and with GoPkgzUserID the stored id is go-pkgz's name + "_" + HashID
// of its result (a result that is already a SHA-1 kept as it is); an empty result refuses the login.
func TestCompat_GoPkgzDirectUserIDFunc(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.UserIDFunc = provider.GoPkgzUserID })
	cc := provider.CredCheckerFunc(func(u, p string) (bool, error) { return p == "pw", nil })
	err := s.svc.AddDirectProviderWithUserIDFunc("staff", cc, func(user string, r *http.Request) string {
		switch user {
		case "hashed":
			return sha1hex("kept")
		case "nobody":
			return ""
		}
		return r.Header.Get("X-Tenant") + "/" + user
	})
	if err != nil {
		t.Fatal(err)
	}
	login := func(user string) (int, []byte) {
		st, _, b := s.do(s.client, http.MethodPost, "/auth/staff/login", strings.NewReader(`{"user":"`+user+`","passwd":"pw"}`),
			map[string]string{"Content-Type": "application/json", "X-Tenant": "acme"})
		return st, b
	}
	for user, want := range map[string]string{"bob": "staff_" + sha1hex("acme/bob"), "hashed": "staff_" + sha1hex("kept")} {
		st, b := login(user)
		var u token.User
		mustJSON(t, b, &u)
		if st != http.StatusOK || u.ID != want || u.Name != user {
			t.Fatalf("%s: %d %s, want id %s", user, st, b, want)
		}
	}
	if st, b := login("nobody"); st != http.StatusInternalServerError {
		t.Fatalf("empty id: %d %s", st, b)
	}
	if err := s.svc.AddDirectProviderWithUserIDFunc("other", cc, nil); err == nil {
		t.Fatal("a nil user id func was accepted")
	}
}

// TestCompat_RolesIgnoreCase: RBAC matches roles exactly by default; RolesIgnoreCase makes
// "Editor" match "editor", as go-pkgz/auth does.
func TestCompat_RolesIgnoreCase(t *testing.T) {
	t.Parallel()
	role := func(o *auth.Options) {
		o.ClaimsUpdater = token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			if c.User != nil {
				c.User.Role = "Editor"
			}
			return c
		})
	}
	for _, tc := range []struct {
		ignoreCase bool
		want       int
	}{{false, 403}, {true, 200}} {
		s := newSite(t, role, func(o *auth.Options) { o.RolesIgnoreCase = tc.ignoreCase })
		s.directLogin("")
		if st, _, b := s.do(s.plain, http.MethodGet, "/app/editors", nil, s.xsrf()); st != tc.want {
			t.Fatalf("RolesIgnoreCase=%v: %d %s", tc.ignoreCase, st, b)
		}
	}
}
