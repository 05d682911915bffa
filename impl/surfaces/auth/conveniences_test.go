package auth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestOptions_TransportNames: a site that already uses other cookie and header names keeps them:
// the login sets the renamed cookies, the renamed XSRF header unlocks the cookie, the default
// header name no longer does, the renamed token header works, and the demo page reads the renamed
// cookie into the renamed header.
func TestOptions_TransportNames(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.JWTCookieName, o.XSRFCookieName = "SID", "SID-XSRF"
		o.JWTHeaderKey, o.XSRFHeaderKey, o.JWTQuery = "X-Site-Token", "X-Site-XSRF", "sid"
	})
	s.directLogin("")
	if s.cookie("SID") == "" || s.cookie("SID-XSRF") == "" || s.cookie("JWT") != "" || s.cookie("XSRF-TOKEN") != "" {
		t.Fatalf("cookies after login: SID=%q SID-XSRF=%q JWT=%q", s.cookie("SID"), s.cookie("SID-XSRF"), s.cookie("JWT"))
	}
	if st, _, _ := s.do(s.plain, http.MethodGet, "/app/private", nil, map[string]string{"X-Site-XSRF": s.cookie("SID-XSRF")}); st != 200 {
		t.Fatalf("renamed XSRF header: %d", st)
	}
	if st, _, _ := s.do(s.plain, http.MethodGet, "/app/private", nil, map[string]string{"X-XSRF-TOKEN": s.cookie("SID-XSRF")}); st != 401 {
		t.Fatalf("default XSRF header still accepted: %d", st)
	}
	tok := s.cookie("SID")
	anon := &http.Client{}
	if st, _, _ := s.do(anon, http.MethodGet, "/app/private", nil, map[string]string{"X-Site-Token": tok}); st != 200 {
		t.Fatalf("renamed token header: %d", st)
	}
	if st, _, _ := s.do(anon, http.MethodGet, "/app/private?sid="+url.QueryEscape(tok), nil, nil); st != 200 {
		t.Fatalf("renamed token query: %d", st)
	}
	if st, _, _ := s.do(anon, http.MethodGet, "/app/private", nil, map[string]string{"X-JWT": tok}); st != 401 {
		t.Fatalf("default token header still accepted: %d", st)
	}
	_, _, page := s.get("/auth", nil)
	if !strings.Contains(string(page), `xsrfCookie = "SID-XSRF", xsrfHeader = "X-Site-XSRF"`) {
		t.Fatalf("demo page does not use the renamed cookie and header:\n%s", page)
	}
}

// TestOptions_CookieDomainAndSameSite: JWTCookieDomain puts Domain on both session cookies, at
// login and on the clearing cookies of logout (a browser keeps a cookie whose clearing copy names
// another domain); without it the cookies are host-only. SameSite is Lax by default, and
// http.SameSiteDefaultMode sends no attribute, as go-pkgz/auth does by default.
func TestOptions_CookieDomainAndSameSite(t *testing.T) {
	t.Parallel()
	login := func(s *site) []*http.Cookie {
		st, h, b := s.do(s.plain, http.MethodPost, "/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`),
			map[string]string{"Content-Type": "application/json"})
		if st != http.StatusOK {
			t.Fatalf("login: %d %s", st, b)
		}
		return (&http.Response{Header: h}).Cookies()
	}
	logout := func(s *site) []*http.Cookie {
		st, h, b := s.do(s.plain, http.MethodGet, "/auth/logout", nil, nil)
		if st != http.StatusOK {
			t.Fatalf("logout: %d %s", st, b)
		}
		return (&http.Response{Header: h}).Cookies()
	}
	// check finds the JWT and XSRF cookies among cs and compares their Domain and SameSite.
	check := func(what string, cs []*http.Cookie, domain string, sameSite http.SameSite) {
		t.Helper()
		found := 0
		for _, c := range cs {
			if c.Name != "JWT" && c.Name != "XSRF-TOKEN" {
				continue
			}
			found++
			if c.Domain != domain || c.SameSite != sameSite {
				t.Errorf("%s: cookie %s has Domain %q SameSite %v (raw %q), want %q %v", what, c.Name, c.Domain, c.SameSite, c.Raw, domain, sameSite)
			}
		}
		if found != 2 {
			t.Errorf("%s: %d session cookies in %v", what, found, cs)
		}
	}

	wide := newSite(t, func(o *auth.Options) { o.JWTCookieDomain = "example.com" })
	check("domain login", login(wide), "example.com", http.SameSiteLaxMode)
	check("domain logout", logout(wide), "example.com", http.SameSiteLaxMode)

	def := newSite(t)
	check("default login", login(def), "", http.SameSiteLaxMode)
	check("default logout", logout(def), "", http.SameSiteLaxMode)

	unset := newSite(t, func(o *auth.Options) { o.SameSite = http.SameSiteDefaultMode })
	cs := login(unset)
	check("SameSiteDefaultMode", cs, "", 0) // parsed back, an absent attribute is 0
	for _, c := range cs {
		if strings.Contains(strings.ToLower(c.Raw), "samesite") {
			t.Errorf("SameSiteDefaultMode: cookie %q carries SameSite", c.Raw)
		}
	}
}

// TestOptions_ErrorHandler: the middleware's refusals go through Options.ErrorHandler with their
// status and reason: here a site sends anonymous visitors to its login page and answers the
// forbidden ones with its own text.
func TestOptions_ErrorHandler(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []error
	s := newSite(t, func(o *auth.Options) {
		o.ErrorHandler = func(w http.ResponseWriter, r *http.Request, status int, err error) {
			mu.Lock()
			got = append(got, err)
			mu.Unlock()
			if status == http.StatusUnauthorized {
				http.Redirect(w, r, "/login?from="+url.QueryEscape(r.URL.Path), http.StatusFound)
				return
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "not for you")
		}
	})
	st, h, _ := s.do(s.plain, http.MethodGet, "/app/private", nil, nil)
	if st != http.StatusFound || h.Get("Location") != "/login?from=%2Fapp%2Fprivate" {
		t.Fatalf("anonymous: %d %q", st, h.Get("Location"))
	}
	s.directLogin("")
	for _, path := range []string{"/app/admin", "/app/editors"} {
		if st, _, b := s.do(s.plain, http.MethodGet, path, nil, s.xsrf()); st != 403 || string(b) != "not for you" {
			t.Fatalf("%s: %d %q", path, st, b)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || !errors.Is(got[0], middleware.ErrUnauthorized) || !errors.Is(got[1], middleware.ErrNotAdmin) || !errors.Is(got[2], middleware.ErrRoleRefused) {
		t.Fatalf("errors passed: %v", got)
	}
}

// TestAddCustomProvider_OneCall: one call registers an OAuth 2.0 provider from its endpoints,
// user-info URL and mapping; a login through it (against the local OAuth 2.0 server) gives the
// mapped user under the provider's name.
func TestAddCustomProvider_OneCall(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ts := httptest.NewUnstartedServer(nil)
	srv, err := oauthserver.New(oauthserver.Options{
		URL:         "http://" + ts.Listener.Addr().String(),
		Clients:     []oauthserver.Client{{ID: "cid", Secret: "csecret", RedirectURIs: []string{s.srv.URL + "/auth/corp/callback"}}},
		DefaultUser: "carol",
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	e := srv.Endpoint()
	err = s.svc.AddCustomProvider(provider.CustomOAuth2{
		Name: "corp", Cid: "cid", Csecret: "csecret", AuthURL: e.AuthURL, TokenURL: e.TokenURL,
		InfoURL: srv.InfoURL(), Scopes: []string{"profile"}, PKCE: true,
		MapUserFn: func(d provider.UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: "corp " + d.Value("name")}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomProvider(provider.CustomOAuth2{Name: "github", Cid: "x", Csecret: "y", AuthURL: "a", TokenURL: "b", InfoURL: "c"}); !errors.Is(err, provider.ErrBuiltinName) {
		t.Fatalf("built-in name: %v", err)
	}
	st, h, b := s.get("/auth/corp/login", nil)
	if st != http.StatusFound {
		t.Fatalf("login: %d %s", st, b)
	}
	st, h, b = s.do(s.plain, http.MethodGet, h.Get("Location"), nil, nil)
	if st != http.StatusFound {
		t.Fatalf("authorize: %d %s", st, b)
	}
	st, _, b = s.get(h.Get("Location"), nil)
	var u token.User
	mustJSON(t, b, &u)
	if st != 200 || u.Name != "corp carol" || u.ID != token.UserID("corp", "carol") && !strings.HasPrefix(u.ID, "corp_") {
		t.Fatalf("callback: %d %s", st, b)
	}
}
