package auth_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// printfLog is a site's own logger type: the seed's Logger is anything with Logf.
type printfLog struct{ lines *lines }

func (l printfLog) Logf(format string, args ...any) { l.lines.Logf(format, args...) }

// freeLoopbackPort returns a port nothing listens on at 127.0.0.1 (for a server that listens on
// its URL's port, as the local server's Run does).
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// seedProgram is the seed's local-server program (auth-service.md: "a local customizable OAuth 2.0
// server", configured by URL with port, WithLoginPage, LoginPageHandler and a logger; a custom
// provider by name, client, endpoints, InfoURL, MapUserFn and scopes), written as a site would
// write it against the library's documented API, with the library's default options: no HTTP
// client of its own, so the provider's calls go through the guarded default. Only what the
// library requires beyond the seed is added: the server's Clients (exact redirect URIs) and
// AnyUser (anyone may log in, as with the seed's server). It returns the site's URL.
func seedProgram(t *testing.T, siteLog logger.L, mod func(*auth.Options, *provider.CustomHandlerOpt)) string {
	t.Helper()
	mux := http.NewServeMux()
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	opts := auth.Options{
		SecretReader:   token.SecretFunc(func(string) (string, error) { return "secret-of-the-seed-program-0123456789", nil }),
		TokenDuration:  5 * time.Minute,
		CookieDuration: 24 * time.Hour,
		Issuer:         "my-demo-service",
		URL:            site.URL,
		Logger:         siteLog,
	}
	providerOpt := provider.CustomHandlerOpt{
		MapUserFn: func(data provider.UserData, _ []byte) token.User {
			return token.User{ID: data.Value("id"), Name: data.Value("name")}
		},
		Scopes: []string{"user:email"},
	}
	if mod != nil {
		mod(&opts, &providerOpt)
	}
	svc, err := auth.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })

	// The local OAuth 2.0 server, on loopback, with the seed's options.
	srv, err := oauthserver.New(oauthserver.Options{
		URL:           fmt.Sprintf("http://127.0.0.1:%d", freeLoopbackPort(t)),
		WithLoginPage: true,
		LoginPageHandler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, `<h1>Local login</h1><form method="post"><input name="username"><button>Log in</button></form>`)
		},
		Logger:  siteLog,
		Clients: []oauthserver.Client{{ID: "cid", Secret: "csecret", RedirectURIs: []string{site.URL + "/auth/custom123/callback"}}},
		AnyUser: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("local server: %v", err)
		}
	})

	providerOpt.Endpoint = srv.Endpoint()
	providerOpt.InfoURL = srv.InfoURL()
	if err := svc.AddCustomOAuth2Provider("custom123", auth.Client{Cid: "cid", Csecret: "csecret"}, providerOpt); err != nil {
		t.Fatal(err)
	}
	authH, avatarH := svc.Handlers()
	mux.Handle("/auth/", authH)
	mux.Handle("/avatar/", avatarH)
	mux.Handle("/private", svc.Middleware().Auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := token.MustGetUserInfo(r)
		fmt.Fprintf(w, "hello %s (%s)", u.Name, u.ID)
	})))
	// Wait for the local server to listen (Run was started in the background).
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", strings.TrimPrefix(srv.Endpoint().AuthURL[:strings.LastIndex(srv.Endpoint().AuthURL, "/")], "http://"))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local server does not listen: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return site.URL
}

// signIn walks a browser through the login: a real HTTP client with a cookie jar that follows
// redirects, from the site's login link to the local server's page, the form posted back to it,
// and the callback. When the login answered 200, it then opens the site's private page as the
// page's script would (cookie and X-XSRF-TOKEN) and returns that answer; otherwise the login's.
func signIn(t *testing.T, siteURL, name string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.Get(siteURL + "/auth/custom123/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Local login") {
		t.Fatalf("login page: %d %s; want the LoginPageHandler's page", resp.StatusCode, page)
	}
	resp, err = browser.PostForm(resp.Request.URL.String(), url.Values{"username": {name}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(body)
	}
	req, _ := http.NewRequest(http.MethodGet, siteURL+"/private", nil)
	u, _ := url.Parse(siteURL)
	for _, c := range jar.Cookies(u) {
		if c.Name == "XSRF-TOKEN" {
			req.Header.Set("X-XSRF-TOKEN", c.Value)
		}
	}
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body)
}

// TestSeed_LocalServerProgram: the seed's local-server program signs a user in on loopback with
// the library's default options, through a real HTTP client, and its logger, a type of the
// site's own with Logf, is the library's and the server's Logger as it is.
func TestSeed_LocalServerProgram(t *testing.T) {
	t.Parallel()
	var log lines
	siteURL := seedProgram(t, printfLog{&log}, nil)
	st, body := signIn(t, siteURL, "ada")
	if st != http.StatusOK || body != "hello ada (custom123_"+token.HashID("ada")+")" {
		t.Fatalf("after the login: %d %q; want the private page greeting ada\nlog:\n%s", st, body, log.String())
	}
}

// TestCompat_GoPkgzCustomProviderIDs: a custom provider moved from go-pkgz/auth keeps its ids. Its
// MapUserFn returned the final id there ("custom123_" + the provider's id); with KeepID that id is
// the user's id as it is, also under UserIDFunc: provider.GoPkgzUserID (without it the id would
// be hashed again).
func TestCompat_GoPkgzCustomProviderIDs(t *testing.T) {
	t.Parallel()
	siteURL := seedProgram(t, nil, func(o *auth.Options, p *provider.CustomHandlerOpt) {
		o.UserIDFunc = provider.GoPkgzUserID
		p.MapUserFn = func(data provider.UserData, _ []byte) token.User {
			return token.User{ID: "custom123_" + data.Value("id"), Name: data.Value("name")} // go-pkgz's convention
		}
		p.KeepID = true
	})
	if st, body := signIn(t, siteURL, "ada"); st != http.StatusOK || body != "hello ada (custom123_ada)" {
		t.Fatalf("after the login: %d %q; want the go-pkgz id custom123_ada", st, body)
	}
}

// TestCustomProvider_GuardRefusalSaysSo: where the outbound guard refuses the provider's address
// (a site's own guarded client, without the loopback the endpoints name), the callback's 502
// says the guard refused it rather than blaming the provider, and an ERROR line naming the
// endpoint and what to set reaches the site's Logger, or without one the standard log.
func TestCustomProvider_GuardRefusalSaysSo(t *testing.T) {
	var std lines
	old := slog.Default()
	slog.SetDefault(logger.ToSlog(&std))
	t.Cleanup(func() { slog.SetDefault(old) })
	for _, tc := range []struct {
		name string
		log  *lines
	}{{"with a Logger", &lines{}}, {"without one", nil}} {
		var l logger.L
		if tc.log != nil {
			l = printfLog{tc.log}
		}
		siteURL := seedProgram(t, l, func(o *auth.Options, _ *provider.CustomHandlerOpt) {
			o.HTTPClient = outbound.New(outbound.Options{})
		})
		st, body := signIn(t, siteURL, "ada")
		if st != http.StatusBadGateway || !strings.Contains(body, `"code":"exchange_failed"`) || !strings.Contains(body, "outbound address guard") {
			t.Fatalf("%s: %d %s; want 502 exchange_failed naming the outbound guard", tc.name, st, body)
		}
		got := std.String()
		if tc.log != nil {
			got = tc.log.String()
		}
		if !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "outbound guard refused") || !strings.Contains(got, "Options.HTTPClient") ||
			!strings.Contains(got, "endpoint=http://127.0.0.1:") {
			t.Fatalf("%s: log\n%s\nwant an ERROR line naming the guard, the endpoint and Options.HTTPClient", tc.name, got)
		}
	}
}

// TestCustomProvider_PrivateEndpointFailsAtStart: an endpoint at a private address other than
// loopback is refused when the provider is registered, naming the option that reaches it, instead
// of a 502 at every login.
func TestCustomProvider_PrivateEndpointFailsAtStart(t *testing.T) {
	t.Parallel()
	svc, err := auth.New(auth.Options{SecretReader: token.SecretFunc(func(string) (string, error) { return testSecret, nil }),
		URL: "https://site.example"})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.AddCustomProvider(provider.CustomOAuth2{Name: "corp", Cid: "cid", Csecret: "csecret",
		AuthURL: "https://sso.corp.example/authorize", TokenURL: "http://10.0.0.5/token", InfoURL: "http://10.0.0.5/userinfo"})
	if err == nil || !strings.Contains(err.Error(), "10.0.0.5") || !strings.Contains(err.Error(), "Options.HTTPClient") {
		t.Fatalf("err = %v; want a refusal naming the address and Options.HTTPClient", err)
	}
}
