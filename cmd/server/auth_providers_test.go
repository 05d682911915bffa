package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func newTestAuthService(t *testing.T) *auth.Service {
	t.Helper()
	svc, err := auth.New(auth.Options{URL: "http://site.example",
		SecretReader: token.SecretFunc(func(string) (string, error) { return "0123456789abcdef0123456789abcdef", nil })})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// TestAddConfiguredProviders: each provider's settings enable it; half or broken settings fail
// the start instead of silently leaving a provider out.
func TestAddConfiguredProviders(t *testing.T) {
	t.Parallel()
	p8, _ := providertest.GenerateP8(t)
	keyFile := filepath.Join(t.TempDir(), "AuthKey.p8")
	if err := os.WriteFile(keyFile, p8, 0o600); err != nil {
		t.Fatal(err)
	}
	tg := providertest.NewTelegram(t, "123:tg-secret", "triad_bot")
	custom := `[{"name":"corp","cid":"c","csecret":"s","auth_url":"https://sso.example/a","token_url":"https://sso.example/t","info_url":"https://sso.example/u","scopes":["profile"],"pkce":true}]`
	cfg, err := LoadConfig([]string{
		"-auth-github-cid", "gh-id", "-auth-github-csecret", "gh-secret",
		"-auth-microsoft-cid", "ms-id", "-auth-microsoft-csecret", "ms-secret", "-auth-microsoft-tenant", "contoso.onmicrosoft.com",
		"-auth-twitter-cid", "ck", "-auth-twitter-csecret", "cs",
		"-auth-apple-client-id", "com.example.web", "-auth-apple-team-id", "TEAM", "-auth-apple-key-id", "KEY", "-auth-apple-key-file", keyFile,
		"-auth-telegram-token", "123:tg-secret", "-auth-telegram-api-url", tg.URL(), "-auth-providers-allow-private",
		"-auth-custom-providers", custom,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestAuthService(t)
	if err := addConfiguredProviders(context.Background(), cfg, svc, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(svc.Providers(), ","); got != "github,microsoft,twitter,apple,telegram,corp" {
		t.Fatalf("providers %s", got)
	}
	ms, _ := svc.Provider("microsoft")
	if u := ms.(*provider.OAuth2Handler).OAuth2().Endpoint.AuthURL; !strings.Contains(u, "/contoso.onmicrosoft.com/") {
		t.Fatalf("tenant not applied: %s", u)
	}
	tgp, _ := svc.Provider("telegram")
	if tgp.(*provider.TelegramHandler).BotName() != "triad_bot" {
		t.Fatal("bot name not read from getMe")
	}

	for name, args := range map[string][]string{
		"cid without secret":    {"-auth-github-cid", "x"},
		"apple without key":     {"-auth-apple-client-id", "c", "-auth-apple-team-id", "t", "-auth-apple-key-id", "k"},
		"apple with broken key": {"-auth-apple-client-id", "c", "-auth-apple-team-id", "t", "-auth-apple-key-id", "k", "-auth-apple-key", "garbage"},
		"apple key without ids": {"-auth-apple-key-file", keyFile},
		"custom not JSON":       {"-auth-custom-providers", "corp:c:s"},
		"custom built-in name":  {"-auth-custom-providers", strings.Replace(custom, `"corp"`, `"github"`, 1)},
		"custom misspelt key":   {"-auth-custom-providers", strings.Replace(custom, `"scopes"`, `"scope"`, 1)},
		"telegram wrong token":  {"-auth-telegram-token", "999:wrong", "-auth-telegram-api-url", tg.URL(), "-auth-providers-allow-private"},
		// Without the opt-out, the guarded outbound client refuses a Bot API on loopback.
		"telegram on loopback": {"-auth-telegram-token", "123:tg-secret", "-auth-telegram-api-url", tg.URL()},
	} {
		cfg, err := LoadConfig(args)
		if err != nil {
			t.Fatal(err)
		}
		err = addConfiguredProviders(context.Background(), cfg, newTestAuthService(t), nil)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if name == "telegram on loopback" && !errors.Is(err, outbound.ErrForbiddenAddress) {
			t.Errorf("%s: err = %v, want ErrForbiddenAddress", name, err)
		}
		if name == "custom misspelt key" && !strings.Contains(err.Error(), `"scope"`) {
			t.Errorf("%s: the error does not name the key: %v", name, err)
		}
		for _, leak := range []string{"garbage", "999:wrong", `"s"`} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: error leaks a secret: %v", name, err)
			}
		}
	}
}

func TestProviderSecretsMasked(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig([]string{"-auth-github-cid", "gh-id", "-auth-github-csecret", "gh-s3cret",
		"-auth-telegram-token", "123:tg-s3cret", "-auth-apple-key", "apple-s3cret", "-auth-custom-providers", `[{"csecret":"custom-s3cret"}]`})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	newLoggerTo(&sb, c).Info("config", "config", c)
	for _, leak := range []string{"gh-s3cret", "tg-s3cret", "apple-s3cret", "custom-s3cret"} {
		if strings.Contains(sb.String(), leak) {
			t.Fatalf("log line leaks %s: %s", leak, sb.String())
		}
	}
}

// TestServer_TelegramProviderLogin runs the whole server with the messenger provider configured from flags
// and logs a user in through a fake Bot API: every response is checked against api/auth.yaml.
func TestServer_TelegramProviderLogin(t *testing.T) {
	t.Parallel()
	tg := providertest.NewTelegram(t, "4242:bot-secret-token", "triad_login_bot")
	base, _ := testServer(t, "-database-url", dbtest.NewURL(t),
		"-auth-telegram-token", "4242:bot-secret-token", "-auth-telegram-api-url", tg.URL(), "-auth-providers-allow-private")
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.Client(t, spec)
	c.Jar, _ = cookiejar.New(nil)
	get := func(path string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
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
	if st, b := get("/auth/list"); st != 200 || !strings.Contains(b, `"telegram"`) {
		t.Fatalf("list: %d %s", st, b)
	}
	// The 200 bodies are decoded as a generated client does, by the spec's discriminator (status).
	variant := func(b string) any {
		t.Helper()
		var body authapi.AuthLogin200JSONResponseBody
		if err := json.Unmarshal([]byte(b), &body); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		v, err := body.ValueByDiscriminator()
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	st, b := get("/auth/telegram/login")
	if st != 200 {
		t.Fatalf("login start: %d %s", st, b)
	}
	ls, ok := variant(b).(authapi.MessengerLogin)
	if !ok || ls.Status != authapi.Pending || ls.Bot != "triad_login_bot" || ls.Token == "" {
		t.Fatalf("login start: %s decoded as %#v, want a pending MessengerLogin", b, variant(b))
	}
	if strings.Contains(b, "bot-secret-token") {
		t.Fatal("bot token in the login answer")
	}
	if st, b := get("/auth/telegram/login?token=" + ls.Token); st != http.StatusNotFound || !strings.Contains(b, "not_confirmed") {
		t.Fatalf("before confirmation: %d %s", st, b)
	}
	tg.UserSends(providertest.TelegramUser{ID: 31337, FirstName: "Nadia", Username: "nadia"}, "/start "+ls.Token)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, b = get("/auth/telegram/login?token=" + ls.Token)
		if st != http.StatusNotFound || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st != 200 {
		t.Fatalf("after confirmation: %d %s", st, b)
	}
	if u, ok := variant(b).(authapi.LoggedInUser); !ok || u.Name != "Nadia" {
		t.Fatalf("after confirmation: %s decoded as %#v, want the LoggedInUser Nadia", b, variant(b))
	}
	u, _ := url.Parse(base)
	xsrf := ""
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "XSRF-TOKEN" {
			xsrf = ck.Value
		}
	}
	st, b = get("/auth/user", "X-XSRF-TOKEN", xsrf)
	if st != 200 || !strings.Contains(b, token.UserID("telegram", "31337")) {
		t.Fatalf("user: %d %s", st, b)
	}
	if sent := tg.WaitSent(1, 5*time.Second); len(sent) != 1 || sent[0].ChatID != 31337 {
		t.Fatalf("bot sent %+v", sent)
	}
}

// TestServer_CustomProviderWithLocalServer runs the whole server with a custom OAuth2 provider from
// AUTH_CUSTOM_PROVIDERS pointed at the local OAuth2 server, and logs in through its login page.
func TestServer_CustomProviderWithLocalServer(t *testing.T) {
	t.Parallel()
	// The callback URL must be known before the server starts: reserve a port, then free it for run.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	site := "http://" + addr

	idp := httptest.NewUnstartedServer(nil)
	idpURL := "http://" + idp.Listener.Addr().String()
	srv, err := oauthserver.New(oauthserver.Options{URL: idpURL, WithLoginPage: true,
		Clients: []oauthserver.Client{{ID: "triad", Secret: "idp-secret", RedirectURIs: []string{site + "/auth/corp/callback"}}},
		Authenticate: func(u, p string) (oauthserver.User, bool) {
			return oauthserver.User{ID: "emp-" + u, Name: "Employee " + u}, u != "" && p == "letmein"
		}})
	if err != nil {
		t.Fatal(err)
	}
	idp.Config.Handler = srv
	idp.Start()
	t.Cleanup(idp.Close)
	custom, _ := json.Marshal([]map[string]any{{"name": "corp", "cid": "triad", "csecret": "idp-secret",
		"auth_url": srv.Endpoint().AuthURL, "token_url": srv.Endpoint().TokenURL, "info_url": srv.InfoURL(), "pkce": true}})

	// A fixed -addr would put the dev provider on its default port 8084, which a parallel test or
	// another process may hold: ask for a free one.
	base, _ := testServer(t, "-addr", addr, "-auth-url", site, "-database-url", dbtest.NewURL(t),
		"-auth-dev-port", "0", "-auth-custom-providers", string(custom),
		"-auth-providers-allow-private") // the IdP is an httptest server on loopback
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	v := apitest.NewValidator(t, spec)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == addr { // the site's answers must match the spec; the IdP's are its own
			return v.Transport(t, nil).RoundTrip(r)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	resp, err := browser.Get(base + "/auth/corp/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Request.URL.String(), idpURL+oauthserver.AuthorizePath) {
		t.Fatalf("login page: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	resp, err = browser.PostForm(resp.Request.URL.String(), url.Values{"username": {"lee"}, "password": {"letmein"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"Employee lee"`) {
		t.Fatalf("callback: %d %s", resp.StatusCode, b)
	}
	u, _ := url.Parse(base)
	xsrf := ""
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "XSRF-TOKEN" {
			xsrf = ck.Value
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/auth/user", nil)
	req.Header.Set("X-XSRF-TOKEN", xsrf)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), token.UserID("corp", "emp-lee")) {
		t.Fatalf("user: %d %s", resp.StatusCode, b)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProviderSettingsFromEnv: the documented environment variables (not only the flags) enable
// the providers. Not parallel: it sets the process environment.
func TestProviderSettingsFromEnv(t *testing.T) {
	t.Setenv("AUTH_GOOGLE_CID", "g-id")
	t.Setenv("AUTH_GOOGLE_CSECRET", "g-secret")
	t.Setenv("AUTH_MICROSOFT_CID", "ms-id")
	t.Setenv("AUTH_MICROSOFT_CSECRET", "ms-secret")
	t.Setenv("AUTH_MICROSOFT_TENANT", "consumers")
	t.Setenv("AUTH_BATTLENET_CID", "bn-id")
	t.Setenv("AUTH_BATTLENET_CSECRET", "bn-secret")
	cfg, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := newTestAuthService(t)
	if err := addConfiguredProviders(context.Background(), cfg, svc, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(svc.Providers(), ","); got != "google,microsoft,battlenet" {
		t.Fatalf("providers %s", got)
	}
	ms, _ := svc.Provider("microsoft")
	conf := ms.(*provider.OAuth2Handler).OAuth2()
	if !strings.Contains(conf.Endpoint.AuthURL, "/consumers/") || conf.ClientID != "ms-id" || conf.ClientSecret != "ms-secret" {
		t.Fatalf("microsoft from env: %s %s", conf.Endpoint.AuthURL, conf.ClientID)
	}
	if conf.RedirectURL != "http://site.example/auth/microsoft/callback" {
		t.Fatalf("callback URL %s", conf.RedirectURL)
	}
}
