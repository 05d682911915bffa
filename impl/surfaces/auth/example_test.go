package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// browser is what the examples use in place of a browser: a cookie jar, and the XSRF header a
// page's script copies from the XSRF-TOKEN cookie into every request.
type browser struct {
	base string
	c    *http.Client
}

func newBrowser(base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{base: base, c: &http.Client{Jar: jar}}
}

// do sends a request and prints the status and the body's first line.
func (b *browser) do(method, path, contentType, reqBody string) {
	req, _ := http.NewRequest(method, b.base+path, strings.NewReader(reqBody))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == token.DefaultXSRFCookieName {
			req.Header.Set(token.DefaultXSRFHeaderKey, c.Value)
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	shown := path
	if i := strings.IndexAny(shown, "?"); i >= 0 && (strings.Contains(shown, "token=") || strings.Contains(shown, "code=")) {
		shown = shown[:i] + "?…" // tokens and codes differ on every run
	}
	body := strings.ReplaceAll(string(out), b.base, "") // so is the test server's port
	fmt.Println(method, shown, "→", resp.StatusCode, strings.SplitN(strings.TrimSpace(body), "\n", 2)[0])
}

func (b *browser) get(path string) { b.do(http.MethodGet, path, "", "") }

// checkDemo is the direct provider's CredChecker in the examples: one user, demo/demo-password.
// A real site compares against a password hash in its store.
func checkDemo(user, passwd string) (bool, error) {
	return user == "demo" && passwd == "demo-password", nil
}

// The whole library on a chi router: New, a provider, Handlers mounted with chi's Mount,
// Middleware guarding the site's own routes, and the user read back from the request.
func Example() {
	r := chi.NewRouter()
	srv := httptest.NewServer(r) // a real site listens on its own address
	defer srv.Close()

	svc, err := auth.New(auth.Options{
		SecretReader: token.SecretFunc(func(aud string) (string, error) { return "a-secret-of-at-least-32-characters!", nil }),
		URL:          srv.URL, // the site's public URL: callbacks and redirects derive from it
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	// Built-in OAuth providers take a client id and secret: svc.AddProvider("github", cid, csecret).
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}

	authH, avatarH := svc.Handlers()
	r.Mount("/auth", authH)
	r.Mount("/avatar", avatarH)
	m := svc.Middleware()
	r.With(m.Auth).Get("/private", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", token.MustGetUserInfo(r).Name)
	})

	b := newBrowser(srv.URL)
	b.get("/private")
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
	b.get("/private")
	b.get("/auth/status")
	// Output:
	// GET /private → 401 {"code":"unauthorized","message":"authentication required"}
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91"}
	// GET /private → 200 hello demo
	// GET /auth/status → 200 {"status":"logged in","user":"demo"}
}

// The same on the standard library's http.ServeMux: the handlers are registered at "/auth/" and
// "/avatar/" as they are (they strip their own paths), and Middleware wraps any http.Handler.
func Example_serveMux() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	svc, err := auth.New(auth.Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "a-secret-of-at-least-32-characters!", nil }),
		URL:          srv.URL,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}
	authH, avatarH := svc.Handlers()
	mux.Handle("/auth/", authH)
	mux.Handle("/avatar/", avatarH)
	mux.Handle("GET /private", svc.Middleware().Auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", token.MustGetUserInfo(r).Name)
	})))

	b := newBrowser(srv.URL)
	b.get("/auth/list")
	b.do(http.MethodPost, "/auth/local/login", "application/x-www-form-urlencoded", "user=demo&passwd=demo-password")
	b.get("/private")
	b.get("/auth/logout")
	b.get("/private")
	// Output:
	// GET /auth/list → 200 ["local"]
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91"}
	// GET /private → 200 hello demo
	// GET /auth/logout → 200 {"status":"logged out"}
	// GET /private → 401 {"code":"unauthorized","message":"authentication required"}
}

// newExampleSite starts a chi site with the auth handlers mounted and a protected /private route.
func newExampleSite(opts auth.Options) (*auth.Service, *httptest.Server) {
	r := chi.NewRouter()
	srv := httptest.NewServer(r)
	if opts.SecretReader == nil {
		opts.SecretReader = token.SecretFunc(func(string) (string, error) { return "a-secret-of-at-least-32-characters!", nil })
	}
	opts.URL = srv.URL
	if opts.HTTPClient == nil {
		// The examples' providers listen on loopback, which the default outbound client refuses.
		opts.HTTPClient = outbound.New(outbound.Options{AllowPrivate: true})
	}
	svc, err := auth.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	authH, avatarH := svc.Handlers()
	r.Mount("/auth", authH)
	r.Mount("/avatar", avatarH)
	r.With(svc.Middleware().Auth).Get("/private", func(w http.ResponseWriter, r *http.Request) {
		u := token.MustGetUserInfo(r)
		fmt.Fprintf(w, "hello %s (role %q)\n", u.Name, u.Role)
	})
	return svc, srv
}

// The direct provider logs users in with credentials the site checks itself: POST JSON or a
// form to /auth/<name>/login; wrong credentials are a 403.
func ExampleService_AddDirectProvider() {
	svc, srv := newExampleSite(auth.Options{})
	defer srv.Close()
	defer svc.Close()
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}
	b := newBrowser(srv.URL)
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"wrong"}`)
	b.do(http.MethodPost, "/auth/local/login?session=1", "application/json", `{"user":"demo","passwd":"demo-password","aud":"shop"}`)
	b.get("/private")
	// Output:
	// POST /auth/local/login → 403 {"code":"bad_credentials","message":"incorrect user or password"}
	// POST /auth/local/login?session=1 → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","aud":"shop"}
	// GET /private → 200 hello demo (role "")
}

// siteLog is a site's own logger type: anything with Logf(format string, args ...any) is the
// seed's Logger.
type siteLog struct{ prefix string }

func (l siteLog) Logf(format string, args ...any) { fmt.Printf(l.prefix+format+"\n", args...) }

// The seed's Logger (auth-service.md): anything with Logf(format, args...), the predefined
// logger.NoOp and logger.Std, and logger.Func adapting a function. Options.Logger takes any of
// them as it is (a *slog.Logger goes in as logger.FromSlog(s)). Here a site's own logger type
// sees the line the library logs when the credential checker fails: the 500's cause, with the
// request id its answer carries. Without a Logger that line goes to the standard log;
// logger.NoOp silences it.
func ExampleOptions_logger() {
	svc, srv := newExampleSite(auth.Options{Logger: siteLog{prefix: "site log: "}}) // or logger.Std, logger.Func(f), logger.FromSlog(s)
	defer srv.Close()
	defer svc.Close()
	down := provider.CredCheckerFunc(func(user, passwd string) (bool, error) {
		return false, errors.New("user store unreachable")
	})
	if err := svc.AddDirectProvider("local", down); err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "req-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("POST /auth/local/login →", resp.StatusCode, resp.Header.Get("X-Request-Id"))

	// The other direction: code written for the seed's Logger, fed by the site's slog logger.
	var seedLog logger.L = logger.FromSlog(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // so the output is the same on every run
			}
			return a
		},
	})))
	seedLog.Logf("[WARN] %d providers configured", len(svc.Providers()))
	// Output:
	// site log: level=ERROR msg="internal error" err="direct local: credential check: user store unreachable" request_id=req-1 method=POST path=/auth/local/login
	// POST /auth/local/login → 500 req-1
	// level=WARN msg="1 providers configured"
}

// A verified provider sends a confirmation through any Sender (here a function standing in for
// a messenger); the user comes back with the token and is logged in, once.
func ExampleService_AddVerifProvider() {
	svc, srv := newExampleSite(auth.Options{})
	defer srv.Close()
	defer svc.Close()
	var sent string
	sender := provider.SenderFunc(func(address, text string) error {
		sent = text // a real Sender delivers text to address
		return nil
	})
	if err := svc.AddVerifProvider("chat", "Your login link: /auth/chat/login?token={{.Token}}", sender); err != nil {
		log.Fatal(err)
	}
	b := newBrowser(srv.URL)
	b.get("/auth/chat/login?user=ann&address=" + url.QueryEscape("@ann"))
	link := strings.TrimPrefix(sent, "Your login link: ")
	b.get(link)
	b.get(link) // a confirmation works once
	b.get("/private")
	// Output:
	// GET /auth/chat/login?user=ann&address=%40ann → 200 {"status":"sent","address":"@ann"}
	// GET /auth/chat/login?… → 200 {"status":"logged in","name":"ann","id":"chat_9ca8571756a3f38e22e1be7f79c1de50f59e4aa6","email":"@ann"}
	// GET /auth/chat/login?… → 403 {"code":"confirmation_used","message":"confirmation token already used"}
	// GET /private → 200 hello ann (role "")
}

// startOAuth2Server runs the local OAuth 2.0 server of package oauthserver with one client whose
// redirect URI is the site's callback for provider name. Without a login page it approves every
// request for DefaultUser, which suits examples and tests.
func startOAuth2Server(site, name, user string) (*oauthserver.Server, *httptest.Server) {
	ts := httptest.NewUnstartedServer(nil)
	as, err := oauthserver.New(oauthserver.Options{
		URL: "http://" + ts.Listener.Addr().String(),
		Clients: []oauthserver.Client{{ID: "site-client", Secret: "site-client-secret",
			RedirectURIs: []string{site + "/auth/" + name + "/callback"}}},
		DefaultUser: user,
	})
	if err != nil {
		log.Fatal(err)
	}
	ts.Config.Handler = as
	ts.Start()
	return as, ts
}

// A custom OAuth 2.0 provider in one call: endpoints, the user-info URL, the scopes and how its
// answer maps to a user. Here the third party is the local OAuth 2.0 server.
func ExampleService_AddCustomProvider() {
	svc, srv := newExampleSite(auth.Options{})
	defer srv.Close()
	defer svc.Close()
	as, ts := startOAuth2Server(srv.URL, "corp", "carol")
	defer ts.Close()

	err := svc.AddCustomProvider(provider.CustomOAuth2{
		Name: "corp", Cid: "site-client", Csecret: "site-client-secret",
		AuthURL: as.Endpoint().AuthURL, TokenURL: as.Endpoint().TokenURL,
		InfoURL: as.InfoURL(), Scopes: []string{"profile"}, PKCE: true,
		MapUserFn: func(d provider.UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: strings.ToUpper(d.Value("name"))}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	b := newBrowser(srv.URL) // follows the redirects: site → OAuth server → site's callback
	b.get("/auth/corp/login")
	b.get("/private")
	// Output:
	// GET /auth/corp/login → 200 {"status":"logged in","name":"CAROL","id":"corp_28b92b56ee64b92ebb72d865f172ef00c708df83"}
	// GET /private → 200 hello CAROL (role "")
}

// The local OAuth 2.0 server (package oauthserver) is an authorization-code server a site can run
// for its own clients or for development: registered clients, exact redirect URIs, PKCE, and a
// login page checked by Authenticate. Any golang.org/x/oauth2 client, or a custom provider as
// above, talks to it.
func ExampleService_AddCustomProvider_localServer() {
	svc, srv := newExampleSite(auth.Options{})
	defer srv.Close()
	defer svc.Close()
	ts := httptest.NewUnstartedServer(nil)
	as, err := oauthserver.New(oauthserver.Options{
		URL:           "http://" + ts.Listener.Addr().String(),
		Clients:       []oauthserver.Client{{ID: "site-client", Secret: "site-client-secret", RedirectURIs: []string{srv.URL + "/auth/staff/callback"}}},
		WithLoginPage: true,
		Authenticate: func(user, passwd string) (oauthserver.User, bool) {
			return oauthserver.User{ID: "u-" + user, Name: user}, user == "dana" && passwd == "dana-password"
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ts.Config.Handler = as
	ts.Start()
	defer ts.Close()
	err = svc.AddCustomProvider(provider.CustomOAuth2{Name: "staff", Cid: "site-client", Csecret: "site-client-secret",
		AuthURL: as.Endpoint().AuthURL, TokenURL: as.Endpoint().TokenURL, InfoURL: as.InfoURL(), PKCE: true})
	if err != nil {
		log.Fatal(err)
	}

	// The login redirects to the server's login page; the user posts the form back to it.
	b := newBrowser(srv.URL)
	b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := b.c.Get(srv.URL + "/auth/staff/login")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	authorize := resp.Header.Get("Location")
	resp, err = b.c.PostForm(authorize, url.Values{"username": {"dana"}, "password": {"dana-password"}})
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("login page answers", resp.StatusCode, "to", strings.SplitN(resp.Header.Get("Location"), "?", 2)[0] == srv.URL+"/auth/staff/callback")
	b.c.CheckRedirect = nil
	b.get(strings.TrimPrefix(resp.Header.Get("Location"), srv.URL))
	b.get("/private")
	// Output:
	// login page answers 303 to true
	// GET /auth/staff/callback?… → 200 {"status":"logged in","name":"dana","id":"staff_e2caf7af05796ccbe1122a508962c48c98cc423a"}
	// GET /private → 200 hello dana (role "")
}

// An avatar store makes the service keep each user's picture (or an identicon) and serve it from
// the site's own /avatar route; the user's Picture links there. Each kind of store has its package
// under impl/surfaces/auth/avatar: filestore (a directory, here), boltstore, mongostore and pgstore.
func ExampleOptions_avatarStore() {
	dir, err := os.MkdirTemp("", "avatars-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := filestore.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // the caller owns the store
	svc, srv := newExampleSite(auth.Options{AvatarStore: store, AvatarResizeLimit: 64})
	defer srv.Close()
	defer svc.Close()
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}
	b := newBrowser(srv.URL)
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
	pic := srv.URL + "/avatar/" + avatar.AvatarID(token.UserID("local", "demo"))
	resp, err := http.Get(pic)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("avatar:", resp.StatusCode, resp.Header.Get("Content-Type"))
	ids, _ := store.List(context.Background())
	fmt.Println("stored:", len(ids))
	// Output:
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","picture":"/avatar/ed2c45bb3fe3b8360f505280ab363a0893379cc2.image"}
	// avatar: 200 image/png
	// stored: 1
}

// ClaimsUpdater runs when a token is made or refreshed: the place to add a role, an attribute or
// a "blocked" mark from the site's user store. Validator runs on every request through Auth and
// may refuse a token that is still valid (a blocked user, a revoked token id).
func ExampleOptions_claimsUpdaterAndValidator() {
	blocked := map[string]bool{"mallory": true}
	svc, srv := newExampleSite(auth.Options{
		ClaimsUpdater: token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			if c.User != nil && c.User.Name == "demo" {
				c.User.Role = "editor"
				c.User.SetStrAttr("plan", "pro")
			}
			return c
		}),
		Validator: token.ValidatorFunc(func(_ string, c token.Claims) bool {
			return c.User != nil && !blocked[c.User.Name]
		}),
	})
	defer srv.Close()
	defer svc.Close()
	err := svc.AddDirectProvider("local", provider.CredCheckerFunc(func(user, _ string) (bool, error) {
		return user == "demo" || user == "mallory", nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	demo, mallory := newBrowser(srv.URL), newBrowser(srv.URL)
	demo.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"x"}`)
	demo.get("/private")
	mallory.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"mallory","passwd":"x"}`)
	mallory.get("/private")
	// Output:
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","attrs":{"plan":"pro"},"role":"editor"}
	// GET /private → 200 hello demo (role "editor")
	// POST /auth/local/login → 200 {"status":"logged in","name":"mallory","id":"local_1beef780003d3d858d399044058a46cae1b78166"}
	// GET /private → 401 {"code":"unauthorized","message":"authentication required"}
}

// RBAC admits users whose Role is one of the listed roles, Admin admits administrators (the admin
// attribute or role): 401 without a user, 403 for the others. With AdminPasswd set, basic auth
// as "admin" is an administrator too.
func ExampleService_Middleware_rbac() {
	r := chi.NewRouter()
	srv := httptest.NewServer(r)
	defer srv.Close()
	svc, err := auth.New(auth.Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "a-secret-of-at-least-32-characters!", nil }),
		URL:          srv.URL,
		ClaimsUpdater: token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			if c.User != nil && c.User.Name == "demo" {
				c.User.Role = "editor"
			}
			return c
		}),
		AdminPasswd: "admin-password",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}
	authH, _ := svc.Handlers()
	r.Mount("/auth", authH)
	m := svc.Middleware()
	ok := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "welcome", token.MustGetUserInfo(r).Name)
	}
	r.With(m.RBAC("editor", "owner")).Get("/edit", ok)
	r.With(m.Admin).Get("/admin", ok)

	b := newBrowser(srv.URL)
	b.get("/edit")
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
	b.get("/edit")
	b.get("/admin")
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin", nil)
	req.SetBasicAuth("admin", "admin-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("basic auth admin →", resp.StatusCode, strings.TrimSpace(string(body)))
	// Output:
	// GET /edit → 401 {"code":"unauthorized","message":"authentication required"}
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","role":"editor"}
	// GET /edit → 200 welcome demo
	// GET /admin → 403 {"code":"forbidden","message":"administrator only"}
	// basic auth admin → 200 welcome admin
}

// Per-audience secrets: SecretReader gets the token's aud (the `aud` of a direct login, the
// `site` of an OAuth login), so each site served by one service signs with its own secret, and a
// token signed for one site is refused when it claims another.
func ExampleOptions_secretPerAudience() {
	secrets := map[string]string{
		"blog": "blog-secret-of-at-least-32-characters",
		"shop": "shop-secret-of-at-least-32-characters",
	}
	svc, srv := newExampleSite(auth.Options{
		SecretReader: token.SecretFunc(func(aud string) (string, error) {
			s, ok := secrets[aud]
			if !ok {
				return "", fmt.Errorf("no secret for site %q", aud)
			}
			return s, nil
		}),
		Audiences: []string{"blog", "shop"}, // tokens for other sites are neither made nor accepted
	})
	defer srv.Close()
	defer svc.Close()
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(checkDemo)); err != nil {
		log.Fatal(err)
	}
	b := newBrowser(srv.URL)
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password","aud":"blog"}`)
	b.get("/private")
	b.do(http.MethodPost, "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password","aud":"forum"}`)
	// Output:
	// POST /auth/local/login → 200 {"status":"logged in","name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","aud":"blog"}
	// GET /private → 200 hello demo (role "")
	// POST /auth/local/login → 403 {"code":"audience_not_allowed","message":"this site is not an allowed audience"}
}
