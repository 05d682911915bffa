package provider_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// site is a web site embedding the auth service at /auth, served on a random port, with a browser
// (cookie jar) to drive it.
type site struct {
	t       *testing.T
	URL     string
	landing string // another site of the owner, an allowed `from` target
	svc     *auth.Service
	browser *http.Client
}

// loopback is the tests' explicit opt-out of the outbound address guard: the fake providers are
// httptest servers on 127.0.0.1, which the default guarded client refuses.
var loopback = outbound.New(outbound.Options{AllowPrivate: true})

func newSite(t *testing.T) *site {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	u := "http://" + ts.Listener.Addr().String()
	landing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "landing page")
	}))
	t.Cleanup(landing.Close)
	svc, err := auth.New(auth.Options{
		SecretReader:         token.SecretFunc(func(string) (string, error) { return "providers-test-secret-0123456789", nil }),
		URL:                  u,
		AllowedRedirectHosts: []string{strings.TrimPrefix(landing.URL, "http://")},
		HTTPClient:           loopback,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	authH, avatarH := svc.Handlers()
	r := chi.NewRouter()
	r.Mount("/auth", authH)
	r.Mount("/avatar", avatarH)
	ts.Config.Handler = r
	ts.Start()
	t.Cleanup(ts.Close)
	st := &site{t: t, URL: u, svc: svc, landing: landing.URL}
	st.browser = st.newBrowser()
	return st
}

// newBrowser is a browser whose every response from the site is validated against
// api/auth.yaml; responses of the providers' servers pass unchecked.
func (s *site) newBrowser() *http.Client {
	c := newBrowser(s.t)
	spec, err := authapi.GetSpec()
	if err != nil {
		s.t.Fatal(err)
	}
	host := strings.TrimPrefix(s.URL, "http://")
	c.Transport = siteOnly{host: host, site: apitest.NewValidator(s.t, spec).Transport(s.t, nil)}
	return c
}

// siteOnly sends requests for host through the validating transport, others directly.
type siteOnly struct {
	host string
	site http.RoundTripper
}

func (t siteOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == t.host {
		return t.site.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// newBrowser is a client with a cookie jar that follows redirects, like a browser.
func newBrowser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// get fetches path on the site with the browser and returns status and body.
func (s *site) get(path string) (*http.Response, []byte) {
	s.t.Helper()
	resp, err := s.browser.Get(s.URL + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// cookie returns the browser's cookie of that name for the site.
func (s *site) cookie(name string) string {
	u, _ := url.Parse(s.URL)
	for _, c := range s.browser.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// me calls GET /auth/user as a browser app would: JWT cookie plus the XSRF header.
func (s *site) me() (int, token.User) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/auth/user", nil)
	req.Header.Set("X-XSRF-TOKEN", s.cookie("XSRF-TOKEN"))
	resp, err := s.browser.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var u token.User
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
			s.t.Fatal(err)
		}
	}
	return resp.StatusCode, u
}

// errorBody decodes the service's JSON error body.
func errorBody(t *testing.T, b []byte) (code string) {
	t.Helper()
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("not a JSON error body: %s", b)
	}
	return e.Code
}

// wantLoggedIn asserts the browser holds a session for want (ID compared after hashing).
func (s *site) wantLoggedIn(want token.User) {
	s.t.Helper()
	status, u := s.me()
	if status != http.StatusOK {
		s.t.Fatalf("/auth/user: status %d, want 200", status)
	}
	if u.ID != want.ID || u.Name != want.Name || u.Picture != want.Picture {
		s.t.Fatalf("/auth/user = %+v, want id %s name %q picture %q", u, want.ID, want.Name, want.Picture)
	}
}

// wantLoggedOut asserts the browser has no session.
func (s *site) wantLoggedOut() {
	s.t.Helper()
	if s.cookie("JWT") != "" {
		s.t.Fatal("a JWT cookie was set")
	}
	if status, _ := s.me(); status != http.StatusUnauthorized {
		s.t.Fatalf("/auth/user: status %d, want 401", status)
	}
}

func hasPrefix(s, p string) bool { return strings.HasPrefix(s, p) }

func readAll(t *testing.T, r *http.Response) []byte {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// params are the service's provider parameters without the avatar proxy: these tests check how each
// provider maps its picture URL, which the proxy would replace (the proxy has its own tests).
func (s *site) params(cid, csecret string) provider.Params {
	p := s.svc.Params(cid, csecret)
	p.AvatarSaver = nil
	return p
}

// providerFailure is one way a provider can spoil a login, and the refusal the callback must answer.
type providerFailure struct {
	name   string
	fail   providertest.Failures
	status int
	code   string
}

// providerFailures lists the failures every redirect-based provider is tested against: the user
// denying access, the token exchange failing, and the user-info call failing or answering no id
// (which must never become a shared id). exchange and info name those calls in the test names.
func providerFailures(exchange, info string) []providerFailure {
	return []providerFailure{
		{"user denies", providertest.Failures{Deny: true}, http.StatusUnauthorized, provider.CodeProviderError},
		{exchange + " fails", providertest.Failures{Token: true}, http.StatusBadGateway, provider.CodeExchangeFailed},
		{info + " fails", providertest.Failures{Info: true}, http.StatusBadGateway, provider.CodeUserInfoFailed},
		{info + " without id", providertest.Failures{InfoNoID: true}, http.StatusBadGateway, provider.CodeUserInfoFailed},
	}
}
