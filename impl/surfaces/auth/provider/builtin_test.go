package provider_test

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// builtinCase is one built-in OAuth2 provider with the account its fake logs in and the user the
// site must show for it.
type builtinCase struct {
	kind    providertest.Kind
	make    func(provider.Params, provider.Endpoints) *provider.OAuth2Handler
	profile providertest.Profile
	want    token.User // ID raw; hashed in the assertion
	scopes  string
	pkce    bool
}

var builtinCases = []builtinCase{
	{providertest.GitHub, provider.NewGitHub,
		providertest.Profile{ID: "583231", Name: "", Login: "octocat", Picture: "https://avatars.githubusercontent.com/u/583231?v=4"},
		token.User{ID: "583231", Name: "octocat", Picture: "https://avatars.githubusercontent.com/u/583231?v=4"}, "", true},
	{providertest.Google, provider.NewGoogle,
		providertest.Profile{ID: "110169484474386276334", Name: "Ada Lovelace", Picture: "https://lh3.googleusercontent.com/a/x"},
		token.User{ID: "110169484474386276334", Name: "Ada Lovelace", Picture: "https://lh3.googleusercontent.com/a/x"}, "openid profile", true},
	{providertest.Facebook, provider.NewFacebook,
		providertest.Profile{ID: "10158744582", Name: "Mark Example", Picture: "https://platform-lookaside.fbsbx.com/p.jpg"},
		token.User{ID: "10158744582", Name: "Mark Example", Picture: "https://platform-lookaside.fbsbx.com/p.jpg"}, "public_profile", true},
	{providertest.Microsoft, func(p provider.Params, e provider.Endpoints) *provider.OAuth2Handler {
		return provider.NewMicrosoft(p, "", e)
	},
		providertest.Profile{ID: "87d349ed-44d7-43e1-9a83-5f2406dee5bd", Name: "Megan Bowen", Email: "megan@contoso.com"},
		token.User{ID: "87d349ed-44d7-43e1-9a83-5f2406dee5bd", Name: "Megan Bowen"}, "User.Read", true},
	{providertest.Yandex, provider.NewYandex,
		providertest.Profile{ID: "1000034426", Name: "Ivan Ivanov", Login: "ivan", Picture: "131652443"},
		token.User{ID: "1000034426", Name: "Ivan Ivanov", Picture: "https://avatars.yandex.net/get-yapic/131652443/islands-200"}, "login:info login:avatar", true},
	{providertest.BattleNet, provider.NewBattleNet,
		providertest.Profile{ID: "123456789", Login: "Hero#1234"},
		token.User{ID: "123456789", Name: "Hero#1234"}, "openid", false},
	{providertest.Patreon, provider.NewPatreon,
		providertest.Profile{ID: "12345", Name: "Pat Patron", Picture: "https://c8.patreon.com/2/200/12345"},
		token.User{ID: "12345", Name: "Pat Patron", Picture: "https://c8.patreon.com/2/200/12345"}, "identity", false},
}

// addBuiltin registers the provider of c on s, pointed at a fresh fake.
func addBuiltin(t *testing.T, s *site, c builtinCase) *providertest.OAuth2 {
	t.Helper()
	fake := providertest.NewOAuth2(t, c.kind, "cid-"+string(c.kind), "secret-"+string(c.kind))
	fake.SetProfile(c.profile)
	h := c.make(s.params(fake.ClientID, fake.ClientSecret),
		provider.Endpoints{AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(), InfoURL: fake.InfoURL()})
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	return fake
}

// TestBuiltin_LoginFlow logs in through every built-in OAuth2 provider: login → provider →
// callback → cookie → /auth/user shows the mapped user, then logout ends the session.
func TestBuiltin_LoginFlow(t *testing.T) {
	t.Parallel()
	for _, c := range builtinCases {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			fake := addBuiltin(t, s, c)
			resp, body := s.get("/auth/" + string(c.kind) + "/login?from=" + url.QueryEscape(s.landing+"/done"))
			if resp.StatusCode != http.StatusOK || string(body) != "landing page" {
				t.Fatalf("login ended at %s with %d: %s", resp.Request.URL, resp.StatusCode, body)
			}
			want := c.want
			want.ID = token.UserID(string(c.kind), c.want.ID)
			s.wantLoggedIn(want)
			// The id is the provider name and a hash: the provider's own id never reaches the token.
			if _, u := s.me(); !regexp.MustCompile(`^`+string(c.kind)+`_[0-9a-f]{40}$`).MatchString(u.ID) || strings.Contains(u.ID, c.want.ID) {
				t.Fatalf("user id %q is not %s_ and a hash", u.ID, c.kind)
			}

			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d authorization requests", len(reqs))
			}
			q := reqs[0].Query
			if q.Get("scope") != c.scopes {
				t.Errorf("scope %q, want %q", q.Get("scope"), c.scopes)
			}
			if got := q.Get("redirect_uri"); got != s.URL+"/auth/"+string(c.kind)+"/callback" {
				t.Errorf("redirect_uri %q", got)
			}
			if (q.Get("code_challenge") != "") != c.pkce || (c.pkce && q.Get("code_challenge_method") != "S256") {
				t.Errorf("PKCE: challenge %q method %q, want PKCE %v", q.Get("code_challenge"), q.Get("code_challenge_method"), c.pkce)
			}

			resp, _ = s.get("/auth/" + string(c.kind) + "/logout")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("logout: %d", resp.StatusCode)
			}
			s.wantLoggedOut()
		})
	}
}

// TestBuiltin_GoPkgzUserIDs logs in through every built-in OAuth2 provider with
// provider.GoPkgzUserID and checks the id go-pkgz/auth v2 gives the same account: the provider name
// and the SHA-1 of the field go-pkgz reads, as go-pkgz writes it. GitHub's is the login, not the
// numeric id; Battle.net's numeric id 123456789 goes through encoding/json's float64 and %v, so
// go-pkgz hashes "1.23456789e+08", while token.UserID (TestBuiltin_LoginFlow) hashes the digits.
func TestBuiltin_GoPkgzUserIDs(t *testing.T) {
	t.Parallel()
	goPkgzRaw := map[providertest.Kind]string{
		providertest.GitHub:    "octocat",
		providertest.Google:    "110169484474386276334",
		providertest.Facebook:  "10158744582",
		providertest.Microsoft: "87d349ed-44d7-43e1-9a83-5f2406dee5bd",
		providertest.Yandex:    "1000034426",
		providertest.BattleNet: "1.23456789e+08",
		providertest.Patreon:   "12345",
	}
	for _, c := range builtinCases {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			fake := providertest.NewOAuth2(t, c.kind, "cid-"+string(c.kind), "secret-"+string(c.kind))
			fake.SetProfile(c.profile)
			p := s.params(fake.ClientID, fake.ClientSecret)
			p.UserIDFunc = provider.GoPkgzUserID
			h := c.make(p, provider.Endpoints{AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(), InfoURL: fake.InfoURL()})
			if err := s.svc.AddCustomHandler(h); err != nil {
				t.Fatal(err)
			}
			if resp, body := s.get("/auth/" + string(c.kind) + "/login"); resp.StatusCode != http.StatusOK {
				t.Fatalf("login: %d %s", resp.StatusCode, body)
			}
			raw, ok := goPkgzRaw[c.kind]
			if !ok {
				t.Fatalf("no go-pkgz id for %s", c.kind)
			}
			if _, u := s.me(); u.ID != string(c.kind)+"_"+sha1Hex(raw) {
				t.Fatalf("id %q, want %s_ + sha1(%q)", u.ID, c.kind, raw)
			}
		})
	}
}

// TestBuiltin_UserAttributes: Params.UserAttributes copies user-info fields into string
// attributes at login (a numeric field as its digits, a missing one as ""), and
// Service.AddProviderWithUserAttributes registers a built-in with the mapping, refusing twitter
// (not OAuth 2.0) and unknown names.
func TestBuiltin_UserAttributes(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	c := builtinCases[0] // github
	fake := providertest.NewOAuth2(t, c.kind, "cid", "secret")
	fake.SetProfile(c.profile)
	p := s.params(fake.ClientID, fake.ClientSecret)
	p.UserAttributes = map[string]string{"login": "gh_login", "id": "gh_id", "no_such_field": "empty"}
	h := c.make(p, provider.Endpoints{AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(), InfoURL: fake.InfoURL()})
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	if resp, body := s.get("/auth/github/login"); resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	_, u := s.me()
	for attr, want := range map[string]string{"gh_login": "octocat", "gh_id": "583231", "empty": ""} {
		if got, ok := u.Attributes[attr]; !ok || got != want {
			t.Errorf("attribute %s = %v (present %v), want %q; user %+v", attr, got, ok, want, u)
		}
	}

	svc := newSite(t).svc
	attrs := map[string]string{"email": "email"}
	if err := svc.AddProviderWithUserAttributes("google", "cid", "secret", attrs); err != nil {
		t.Fatal(err)
	}
	if g, ok := svc.Provider("google"); !ok || g.(*provider.OAuth2Handler).UserAttributes["email"] != "email" {
		t.Fatalf("google registered without its attributes: %v", g)
	}
	if err := svc.AddProviderWithUserAttributes("twitter", "key", "secret", attrs); err == nil {
		t.Fatal("twitter accepted user attributes")
	}
	if err := svc.AddProviderWithUserAttributes("nosuch", "cid", "secret", attrs); !errors.Is(err, auth.ErrUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	if got := svc.Providers(); len(got) != 1 || got[0] != "google" {
		t.Fatalf("providers %v", got)
	}
}

// sha1Hex is the hex SHA-1 of s, written out here rather than taken from the code under test.
func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestBuiltin_Refusals: each failure on the provider's side is a JSON refusal and sets no session.
func TestBuiltin_Refusals(t *testing.T) {
	t.Parallel()
	failures := providerFailures("token exchange", "user info")
	for _, c := range builtinCases {
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			for _, f := range failures {
				s := newSite(t)
				fake := addBuiltin(t, s, c)
				fake.Fail(f.fail)
				resp, body := s.get("/auth/" + string(c.kind) + "/login")
				if resp.StatusCode != f.status || errorBody(t, body) != f.code {
					t.Fatalf("%s: %d %s, want %d %s", f.name, resp.StatusCode, body, f.status, f.code)
				}
				s.wantLoggedOut()
			}
		})
	}
}

// TestBuiltin_BadState: a callback whose state is missing, forged, or comes without this
// browser's handshake cookie is refused before the code is ever exchanged.
func TestBuiltin_BadState(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := addBuiltin(t, s, builtinCases[0])
	noFollow := &http.Client{Jar: s.browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Start a login but stop at the provider: the handshake cookie is set, the code not yet used.
	resp, err := noFollow.Get(s.URL + "/auth/github/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = noFollow.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb, _ := url.Parse(resp.Header.Get("Location"))
	code, state := cb.Query().Get("code"), cb.Query().Get("state")

	// An attacker's browser (no handshake cookie) replaying the callback gets nothing.
	attacker := s.newBrowser()
	r2, err := attacker.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusBadRequest {
		t.Fatalf("callback without handshake: %d", r2.StatusCode)
	}
	for _, q := range []url.Values{{"code": {code}}, {"code": {code}, "state": {state + "x"}}} {
		resp, body := s.get("/auth/github/callback?" + q.Encode())
		if resp.StatusCode != http.StatusBadRequest || errorBody(t, body) != provider.CodeBadState {
			t.Fatalf("callback %v: %d %s", q, resp.StatusCode, body)
		}
	}
	s.wantLoggedOut()
	_ = fake
}

// TestBuiltin_Registry: the built-ins are available by name with a client id and secret, and
// refuse to register without them.
func TestBuiltin_Registry(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for _, n := range []string{"github", "google", "facebook", "microsoft", "yandex", "battlenet", "patreon", "twitter"} {
		if err := s.svc.AddProvider(n, "id", "secret"); err != nil {
			t.Errorf("AddProvider(%s): %v", n, err)
		}
	}
	s2 := newSite(t)
	if err := s2.svc.AddProvider("github", "", ""); err == nil {
		t.Error("github registered without credentials")
	}
	// Apple and Telegram are built-in names that an id and secret cannot configure: the error says
	// how to add them rather than calling them unknown.
	for name, how := range map[string]string{"apple": "NewApple", "telegram": "NewTelegram"} {
		err := s2.svc.AddProvider(name, "id", "secret")
		if err == nil || errors.Is(err, auth.ErrUnknownProvider) || !strings.Contains(err.Error(), how) {
			t.Errorf("AddProvider(%s): %v", name, err)
		}
	}
	resp, body := s.get("/auth/list")
	if resp.StatusCode != 200 || !hasPrefix(string(body), `["github","google","facebook","microsoft","yandex","battlenet","patreon","twitter"]`) {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	// Microsoft's tenant goes into its endpoints.
	h := provider.NewMicrosoft(s.params("id", "secret"), "contoso.onmicrosoft.com", provider.Endpoints{})
	if got := h.OAuth2().Endpoint.AuthURL; got != "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize" {
		t.Fatalf("tenant auth URL %s", got)
	}
}

// TestBuiltin_StateWorksOnce: the callback clears the handshake, so replaying a callback URL that
// just logged the user in (say, from history) is a bad state, not a second login.
func TestBuiltin_StateWorksOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	addBuiltin(t, s, builtinCases[1])
	var callback string
	s.browser.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == "/auth/google/callback" {
			callback = r.URL.String()
		}
		return nil
	}
	resp, body := s.get("/auth/google/login")
	if resp.StatusCode != http.StatusOK || callback == "" {
		t.Fatalf("login: %d %s (callback %q)", resp.StatusCode, body, callback)
	}
	if s.cookie("AUTH-HANDSHAKE") != "" {
		t.Fatal("the handshake cookie outlived the callback")
	}
	r2, err := s.browser.Get(callback)
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, r2); r2.StatusCode != http.StatusBadRequest || errorBody(t, b) != provider.CodeBadState {
		t.Fatalf("replayed callback: %d %s", r2.StatusCode, b)
	}
}

// TestBuiltin_PlaceholderPictures: Facebook and Yandex answer a placeholder picture for users
// without a photo (a silhouette URL, an empty-avatar id); neither may become the user's picture,
// so the avatar proxy gives such users their identicon instead of a generic grey head.
func TestBuiltin_PlaceholderPictures(t *testing.T) {
	t.Parallel()
	for _, c := range builtinCases {
		if c.kind != providertest.Facebook && c.kind != providertest.Yandex {
			continue
		}
		t.Run(string(c.kind), func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			c.profile.Picture = ""
			addBuiltin(t, s, c)
			if resp, body := s.get("/auth/" + string(c.kind) + "/login"); resp.StatusCode != http.StatusOK {
				t.Fatalf("login: %d %s", resp.StatusCode, body)
			}
			want := c.want
			want.ID = token.UserID(string(c.kind), c.want.ID)
			want.Picture = ""
			s.wantLoggedIn(want)
		})
	}
}

// TestBuiltin_HandshakeExpires: the login state lives in a short-lived handshake; a callback that
// arrives after it expired is a bad state even with the right state and a valid code, while the
// same callback in time logs the user in.
func TestBuiltin_HandshakeExpires(t *testing.T) {
	t.Parallel()
	for _, late := range []bool{false, true} {
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		ts := token.NewService(token.Opts{
			SecretReader:      token.SecretFunc(func(string) (string, error) { return "handshake-test-secret-0123456789", nil }),
			HandshakeDuration: 5 * time.Minute, Now: clock})
		srv := httptest.NewUnstartedServer(nil)
		base := "http://" + srv.Listener.Addr().String()
		fake := providertest.NewOAuth2(t, providertest.GitHub, "cid", "secret")
		h := provider.NewGitHub(provider.Params{URL: base, JwtService: ts, Cid: "cid", Csecret: "secret", HTTPClient: loopback},
			provider.Endpoints{AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(), InfoURL: fake.InfoURL()})
		mux := http.NewServeMux()
		mux.HandleFunc("/auth/github/login", h.LoginHandler)
		mux.HandleFunc("/auth/github/callback", h.AuthHandler)
		srv.Config.Handler = mux
		srv.Start()
		t.Cleanup(srv.Close)

		jar, _ := cookiejar.New(nil)
		var callback string
		browser := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
			if r.URL.Path == "/auth/github/callback" {
				callback = r.URL.String()
				return http.ErrUseLastResponse // stop before the callback: the user is slow to come back
			}
			return nil
		}}
		resp, err := browser.Get(base + "/auth/github/login")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if callback == "" {
			t.Fatal("the provider did not redirect to the callback")
		}
		if late {
			mu.Lock()
			now = now.Add(6 * time.Minute)
			mu.Unlock()
		}
		resp, err = browser.Get(callback)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		switch {
		case late && (resp.StatusCode != http.StatusBadRequest || errorBody(t, body) != provider.CodeBadState):
			t.Fatalf("callback after the handshake expired: %d %s", resp.StatusCode, body)
		case !late && resp.StatusCode != http.StatusOK:
			t.Fatalf("callback in time: %d %s", resp.StatusCode, body)
		}
		u, _ := url.Parse(base)
		hasJWT := false
		for _, c := range jar.Cookies(u) {
			hasJWT = hasJWT || c.Name == "JWT"
		}
		if hasJWT == late {
			t.Fatalf("late=%v: JWT cookie set=%v", late, hasJWT)
		}
	}
}

// TestHandshake_BoundToProvider: a login started at one provider cannot be finished at another's
// callback (OAuth mix-up): the state of a GitHub login, replayed to the Apple and Twitter
// callbacks, is a bad state there, before any code or token is sent to Apple or Twitter.
func TestHandshake_BoundToProvider(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	addBuiltin(t, s, builtinCases[0])
	addApple(t, s)
	addTwitter(t, s)
	noFollow := &http.Client{Jar: s.browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.URL + "/auth/github/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	authz, _ := url.Parse(resp.Header.Get("Location"))
	state := authz.Query().Get("state")
	if state == "" || s.cookie("AUTH-HANDSHAKE") == "" {
		t.Fatal("the GitHub login set no state")
	}
	for _, cb := range []string{
		"/auth/apple/callback?" + url.Values{"code": {"c1"}, "state": {state}}.Encode(),
		"/auth/twitter/callback?" + url.Values{"oauth_token": {state}, "oauth_verifier": {"v"}}.Encode(),
	} {
		// Each refusal clears the handshake; put the GitHub one back for the next callback.
		hs := s.cookie("AUTH-HANDSHAKE")
		resp, body := s.get(cb)
		if resp.StatusCode != http.StatusBadRequest || errorBody(t, body) != provider.CodeBadState {
			t.Fatalf("%s with GitHub's handshake: %d %s", cb, resp.StatusCode, body)
		}
		u, _ := url.Parse(s.URL)
		s.browser.Jar.SetCookies(u, []*http.Cookie{{Name: "AUTH-HANDSHAKE", Value: hs, Path: "/"}})
	}
	s.wantLoggedOut()
}
