package provider_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// startLocalServer runs the local OAuth2 server with a client for each of the site's callbacks.
func startLocalServer(t *testing.T, s *site, opts oauthserver.Options, names ...string) *oauthserver.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	opts.URL = "http://" + ts.Listener.Addr().String()
	for _, n := range names {
		opts.Clients = append(opts.Clients, oauthserver.Client{ID: "cid-" + n, Secret: "secret-" + n,
			RedirectURIs: []string{s.URL + "/auth/" + n + "/callback"}})
	}
	srv, err := oauthserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	return srv
}

func customFor(srv *oauthserver.Server, name string) provider.CustomOAuth2 {
	e := srv.Endpoint()
	return provider.CustomOAuth2{Name: name, Cid: "cid-" + name, Csecret: "secret-" + name,
		AuthURL: e.AuthURL, TokenURL: e.TokenURL, InfoURL: srv.InfoURL(), Scopes: []string{"profile"}, PKCE: true}
}

// TestCustom_LocalServer: a custom provider pointed at the local OAuth2 server, with its login
// page, logs the user in; two clients of the same server live under two names.
func TestCustom_LocalServer(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	srv := startLocalServer(t, s, oauthserver.Options{WithLoginPage: true,
		Authenticate: func(u, p string) (oauthserver.User, bool) {
			if p != "pw-"+u {
				return oauthserver.User{}, false
			}
			return oauthserver.User{ID: "u-" + u, Name: "User " + u, Picture: "http://pics.example/" + u + ".png"}, true
		}}, "corp", "corp-staging")
	for _, name := range []string{"corp", "corp-staging"} {
		c := customFor(srv, name)
		if name == "corp-staging" {
			c.MapUserFn = func(d provider.UserData, _ []byte) token.User {
				return token.User{ID: d.Value("id"), Name: "staging " + d.Value("name")}
			}
		}
		h, err := provider.NewCustomOAuth2(s.params("", ""), c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.svc.AddCustomHandler(h); err != nil {
			t.Fatal(err)
		}
	}

	// The browser lands on the local server's login page, then submits it.
	resp, err := s.browser.Get(s.URL + "/auth/corp/login?from=" + url.QueryEscape(s.landing+"/done"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != oauthserver.AuthorizePath {
		t.Fatalf("login page: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	page := resp.Request.URL.String()
	resp, err = s.browser.PostForm(page, url.Values{"username": {"kim"}, "password": {"nope"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad password: %d", resp.StatusCode)
	}
	resp, err = s.browser.PostForm(page, url.Values{"username": {"kim"}, "password": {"pw-kim"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/done" {
		t.Fatalf("after login at %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("corp", "u-kim"), Name: "User kim", Picture: "http://pics.example/kim.png"})

	// The second client: same server, other name, other id prefix and its own mapping.
	b2 := s.newBrowser()
	s.browser = b2
	resp, err = s.browser.Get(s.URL + "/auth/corp-staging/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = s.browser.PostForm(resp.Request.URL.String(), url.Values{"username": {"kim"}, "password": {"pw-kim"}})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("staging login: %d %s", resp.StatusCode, body)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("corp-staging", "u-kim"), Name: "staging User kim"})
}

// TestCustom_Refusals: the local server's refusals reach the user as JSON errors, no session.
func TestCustom_Refusals(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	srv := startLocalServer(t, s, oauthserver.Options{WithLoginPage: true, AnyUser: true}, "local")
	c := customFor(srv, "local")
	c.Csecret = "wrong-secret" // the token endpoint will refuse the client
	h, err := provider.NewCustomOAuth2(s.params("", ""), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	resp, err := s.browser.Get(s.URL + "/auth/local/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	page := resp.Request.URL.String()
	// The user cancels on the login page: access_denied comes back to the callback.
	r, err := s.browser.PostForm(page, url.Values{"deny": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, r)
	if r.StatusCode != http.StatusUnauthorized || errorBody(t, body) != provider.CodeProviderError {
		t.Fatalf("denied: %d %s", r.StatusCode, body)
	}
	// The user signs in but the exchange fails (wrong client secret).
	resp, err = s.browser.Get(s.URL + "/auth/local/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r, err = s.browser.PostForm(resp.Request.URL.String(), url.Values{"username": {"kim"}})
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, r)
	if r.StatusCode != http.StatusBadGateway || errorBody(t, body) != provider.CodeExchangeFailed {
		t.Fatalf("bad secret: %d %s", r.StatusCode, body)
	}
	s.wantLoggedOut()
}

func TestCustom_NameRules(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	base := provider.CustomOAuth2{Cid: "c", Csecret: "s", AuthURL: "http://x/a", TokenURL: "http://x/t", InfoURL: "http://x/i"}
	for _, n := range []string{"github", "google", "twitter", "apple", "telegram", "dev"} {
		c := base
		c.Name = n
		if _, err := provider.NewCustomOAuth2(s.params("", ""), c); !errors.Is(err, provider.ErrBuiltinName) {
			t.Errorf("custom %q: %v, want ErrBuiltinName", n, err)
		}
	}
	for _, n := range []string{"", "Has Space", "../x", "UPPER"} {
		c := base
		c.Name = n
		if _, err := provider.NewCustomOAuth2(s.params("", ""), c); !errors.Is(err, provider.ErrCustomName) {
			t.Errorf("custom %q: %v, want ErrCustomName", n, err)
		}
	}
	c := base
	c.Name = "acme"
	c.InfoURL = ""
	if _, err := provider.NewCustomOAuth2(s.params("", ""), c); err == nil {
		t.Error("custom provider without InfoURL accepted")
	}
}

// headerLogin is a custom handler for a provider that does not follow OAuth 2.0: a trusted proxy
// in front of the site has authenticated the user and names them in a header.
type headerLogin struct{ p provider.Params }

func (h headerLogin) Name() string { return "proxy" }
func (h headerLogin) LoginHandler(w http.ResponseWriter, r *http.Request) {
	user := r.Header.Get("X-Proxy-User")
	if user == "" {
		provider.WriteError(w, r, http.StatusUnauthorized, provider.CodeBadCredentials, "no proxy user")
		return
	}
	provider.Finish(w, r, h.p, h.Name(), provider.LoginResult{User: token.User{ID: user, Name: user}})
}
func (h headerLogin) AuthHandler(w http.ResponseWriter, r *http.Request) {
	provider.WriteError(w, r, http.StatusNotFound, "not_found", "no callback")
}
func (h headerLogin) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	provider.Logout(w, h.p.JwtService)
}

// TestCustomHandler: any Provider implementation can be added and logs users in.
func TestCustomHandler(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if err := s.svc.AddCustomHandler(headerLogin{p: s.params("", "")}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/auth/proxy/login", nil)
	req.Header.Set("X-Proxy-User", "zoe")
	resp, err := s.browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("proxy login: %d", resp.StatusCode)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("proxy", "zoe"), Name: "zoe"})
}

// addCustomOIDC registers a custom provider named name for a third party that speaks OpenID
// Connect userinfo (the Google-shaped fake): the mapping reads sub, name and picture.
func addCustomOIDC(t *testing.T, s *site, name string, mapUser func(provider.UserData, []byte) token.User) *providertest.OAuth2 {
	t.Helper()
	fake := providertest.NewOAuth2(t, providertest.Google, "cid-"+name, "secret-"+name)
	h, err := provider.NewCustomOAuth2(s.params("", ""), provider.CustomOAuth2{Name: name,
		Cid: fake.ClientID, Csecret: fake.ClientSecret, AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(),
		InfoURL: fake.InfoURL(), Scopes: []string{"openid", "profile"}, PKCE: true, MapUserFn: mapUser})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	return fake
}

func mapOIDC(d provider.UserData, _ []byte) token.User {
	return token.User{ID: d.Value("sub"), Name: d.Value("name"), Picture: d.Value("picture")}
}

// TestCustom_ThirdParty: a custom provider for a third party asks for exactly its Scopes (with
// PKCE), maps the user with MapUserFn and logs the user in; the third party's failures, a
// foreign state, and a user-info answer without the id the mapping reads are refusals without a
// session.
func TestCustom_ThirdParty(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := addCustomOIDC(t, s, "sso", mapOIDC)
	fake.SetProfile(providertest.Profile{ID: "u-77", Name: "Grace Hopper", Picture: "https://idp.example/p/77.png"})
	resp, body := s.get("/auth/sso/login?from=" + url.QueryEscape(s.landing+"/done"))
	if resp.StatusCode != http.StatusOK || string(body) != "landing page" {
		t.Fatalf("login ended at %s with %d: %s", resp.Request.URL, resp.StatusCode, body)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("sso", "u-77"), Name: "Grace Hopper", Picture: "https://idp.example/p/77.png"})
	q := fake.Requests()[0].Query
	if q.Get("scope") != "openid profile" || q.Get("code_challenge_method") != "S256" ||
		q.Get("redirect_uri") != s.URL+"/auth/sso/callback" {
		t.Fatalf("authorization request %v", q)
	}

	for _, f := range providerFailures("token exchange", "user info") {
		s := newSite(t)
		addCustomOIDC(t, s, "sso", mapOIDC).Fail(f.fail)
		resp, body := s.get("/auth/sso/login")
		if resp.StatusCode != f.status || errorBody(t, body) != f.code {
			t.Fatalf("%s: %d %s, want %d %s", f.name, resp.StatusCode, body, f.status, f.code)
		}
		s.wantLoggedOut()
	}

	// The default mapping reads "id"; an OpenID userinfo has "sub" instead, so the login must fail
	// rather than give every user of this provider the id of the empty string.
	s2 := newSite(t)
	addCustomOIDC(t, s2, "sso", nil)
	resp, body = s2.get("/auth/sso/login")
	if resp.StatusCode != http.StatusBadGateway || errorBody(t, body) != provider.CodeUserInfoFailed {
		t.Fatalf("default mapping without id: %d %s", resp.StatusCode, body)
	}
	s2.wantLoggedOut()

	s3 := newSite(t)
	addCustomOIDC(t, s3, "sso", mapOIDC)
	resp, body = s3.get("/auth/sso/callback?" + url.Values{"code": {"c"}, "state": {"forged"}}.Encode())
	if resp.StatusCode != http.StatusBadRequest || errorBody(t, body) != provider.CodeBadState {
		t.Fatalf("forged state: %d %s", resp.StatusCode, body)
	}
	s3.wantLoggedOut()
}
