package auth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// The demo page is text/html, which kin-openapi does not decode by default.
// Avatars are images, which it decodes as opaque files.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
}

const testSecret = "test-secret-0123456789abcdef0123456789"

// site is a test server embedding the auth service like an application would: /auth, /avatar,
// the demo page at /auth/, and a few protected routes of its own under /app.
type site struct {
	t      *testing.T
	svc    *auth.Service
	srv    *httptest.Server
	client *http.Client // validates every response against api/auth.yaml, keeps cookies, no redirects
	plain  *http.Client // for the test's own /app routes, which are not part of the API
	jar    http.CookieJar
}

type siteOpt func(*auth.Options)

func newSite(t *testing.T, mods ...siteOpt) *site {
	t.Helper()
	r := chi.NewRouter()
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	opts := auth.Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return testSecret, nil }),
		URL:          srv.URL,
		LoginPage:    true, LoginPageDirect: "local",
		// The fake providers are httptest servers on loopback: opt out of the outbound address guard.
		HTTPClient: outbound.New(outbound.Options{AllowPrivate: true}),
	}
	for _, m := range mods {
		m(&opts)
	}
	svc, err := auth.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	if err := svc.AddDevProviderOpts(provider.DevOpts{Port: 0, EmailFn: func(u string) string { return u + "@example.com" }}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(func(u, p string) (bool, error) {
		return u == "demo" && p == "demo-password", nil
	})); err != nil {
		t.Fatal(err)
	}
	authH, avatarH := svc.Handlers()
	r.Mount("/auth", authH)
	avatarPath := "/avatar"
	if opts.AvatarRoutePath != "" {
		avatarPath = opts.AvatarRoutePath
	}
	r.Mount(avatarPath, avatarH)
	m := svc.Middleware()
	hello := func(w http.ResponseWriter, r *http.Request) {
		u := token.MustGetUserInfo(r)
		_ = json.NewEncoder(w).Encode(u)
	}
	r.With(m.Auth).Get("/app/private", hello)
	r.With(m.Auth).Post("/app/private", hello)
	r.With(m.Admin).Get("/app/admin", hello)
	r.With(m.RBAC("editor", "owner")).Get("/app/editors", hello)
	r.With(m.Trace, m.UpdateUser).Get("/app/trace", func(w http.ResponseWriter, r *http.Request) {
		u, err := token.GetUserInfo(r)
		if err != nil {
			_, _ = io.WriteString(w, "anonymous")
			return
		}
		_ = json.NewEncoder(w).Encode(u)
	})

	// The published document, parsed once per test process (apitest.Spec).
	spec := apitest.Spec(t, "auth.yaml")
	jar, _ := cookiejar.New(nil)
	c := apitest.Client(t, spec)
	c.Jar = jar
	return &site{t: t, svc: svc, srv: srv, client: c, jar: jar,
		plain: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request with optional headers and returns status, headers and body.
func (s *site) do(c *http.Client, method, path string, body io.Reader, hdr map[string]string) (int, http.Header, []byte) {
	s.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = s.srv.URL + path
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (s *site) get(path string, hdr map[string]string) (int, http.Header, []byte) {
	return s.do(s.client, http.MethodGet, path, nil, hdr)
}

func (s *site) cookie(name string) string {
	u, _ := url.Parse(s.srv.URL)
	for _, c := range s.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// xsrf returns the header a browser script would send with a cookie-borne token.
func (s *site) xsrf() map[string]string {
	return map[string]string{"X-XSRF-TOKEN": s.cookie("XSRF-TOKEN")}
}

// directLogin logs in as demo through the direct provider.
func (s *site) directLogin(query string) token.User {
	s.t.Helper()
	st, _, b := s.do(s.client, http.MethodPost, "/auth/local/login"+query, strings.NewReader(`{"user":"demo","passwd":"demo-password"}`),
		map[string]string{"Content-Type": "application/json"})
	if st != http.StatusOK {
		s.t.Fatalf("direct login: %d %s", st, b)
	}
	var u token.User
	mustJSON(s.t, b, &u)
	return u
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

func errCode(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Code string `json:"code"`
	}
	mustJSON(t, b, &e)
	return e.Code
}

// devLogin walks the dev OAuth flow like a browser: login → dev page → form post → callback.
// It returns the callback's response.
func (s *site) devLogin(loginQuery, username string) (int, http.Header, []byte) {
	s.t.Helper()
	st, h, b := s.get("/auth/dev/login"+loginQuery, nil)
	if st != http.StatusFound {
		s.t.Fatalf("login: %d %s", st, b)
	}
	authURL, _ := url.Parse(h.Get("Location"))
	// The dev server is not part of the API spec: talk to it with the plain client.
	st, _, page := s.do(s.plain, http.MethodGet, authURL.String(), nil, nil)
	if st != http.StatusOK || !strings.Contains(string(page), `name="username"`) {
		s.t.Fatalf("dev page: %d %s", st, page)
	}
	q := authURL.Query()
	form := url.Values{"username": {username}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	st, h, b = s.do(s.plain, http.MethodPost, authURL.String(), strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if st != http.StatusSeeOther {
		s.t.Fatalf("dev authorize: %d %s", st, b)
	}
	return s.get(h.Get("Location"), nil)
}
