package httpapi

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

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// newTestService is a bare auth service for providers to be added to.
func newTestService(t *testing.T) *auth.Service {
	t.Helper()
	svc, err := auth.New(auth.Options{URL: "http://site.example",
		SecretReader: token.SecretFunc(func(string) (string, error) { return "0123456789abcdef0123456789abcdef", nil })})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// TestAddProviders: each provider's settings enable it; half or broken settings fail the start
// instead of silently leaving a provider out, and no error shows a secret.
func TestAddProviders(t *testing.T) {
	t.Parallel()
	p8, _ := providertest.GenerateP8(t)
	keyFile := filepath.Join(t.TempDir(), "AuthKey.p8")
	if err := os.WriteFile(keyFile, p8, 0o600); err != nil {
		t.Fatal(err)
	}
	tg := providertest.NewTelegram(t, "123:tg-secret", "triad_bot")
	custom := `[{"name":"corp","cid":"c","csecret":"s","auth_url":"https://sso.example/a","token_url":"https://sso.example/t","info_url":"https://sso.example/u","scopes":["profile"],"pkce":true}]`
	all := Providers{
		Clients: map[string]*OAuthClient{
			provider.GitHubName: {"gh-id", "gh-secret"}, provider.MicrosoftName: {"ms-id", "ms-secret"}, provider.TwitterName: {"ck", "cs"},
		},
		MicrosoftTenant: "contoso.onmicrosoft.com",
		AppleClientID:   "com.example.web", AppleTeamID: "TEAM", AppleKeyID: "KEY", AppleKeyFile: keyFile, AppleResponseMode: "form_post",
		TelegramToken: "123:tg-secret", TelegramAPIURL: tg.URL(), AllowPrivate: true,
		Custom: kit.Secret(custom),
	}
	svc := newTestService(t)
	if err := AddProviders(context.Background(), svc, all, nil); err != nil {
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

	apple := func(p Providers) Providers {
		p.AppleClientID, p.AppleTeamID, p.AppleKeyID, p.AppleResponseMode = "c", "t", "k", "form_post"
		return p
	}
	for name, p := range map[string]Providers{
		"cid without secret":    {Clients: map[string]*OAuthClient{provider.GitHubName: {ID: "x"}}},
		"apple without key":     apple(Providers{}),
		"apple with broken key": apple(Providers{AppleKey: "garbage"}),
		"apple key without ids": {AppleKeyFile: keyFile, AppleResponseMode: "form_post"},
		"custom not JSON":       {Custom: "corp:c:s"},
		"custom built-in name":  {Custom: kit.Secret(strings.Replace(custom, `"corp"`, `"github"`, 1))},
		"custom misspelt key":   {Custom: kit.Secret(strings.Replace(custom, `"scopes"`, `"scope"`, 1))},
		"telegram wrong token":  {TelegramToken: "999:wrong", TelegramAPIURL: tg.URL(), AllowPrivate: true},
		// Without the opt-out, the guarded outbound client refuses a Bot API on loopback.
		"telegram on loopback": {TelegramToken: "123:tg-secret", TelegramAPIURL: tg.URL()},
	} {
		err := AddProviders(context.Background(), newTestService(t), p, nil)
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

// TestMount_TelegramProviderLogin mounts the surface with the messenger provider configured and
// logs a user in through a fake Bot API: every response is checked against api/auth.yaml.
func TestMount_TelegramProviderLogin(t *testing.T) {
	t.Parallel()
	tg := providertest.NewTelegram(t, "4242:bot-secret-token", "triad_login_bot")
	base := serve(t, dbtest.NewURL(t), true, Settings{Providers: Providers{
		TelegramToken: "4242:bot-secret-token", TelegramAPIURL: tg.URL(), AllowPrivate: true}})
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

// TestMount_CustomProviderWithLocalServer mounts the surface with a custom OAuth2 provider pointed
// at the local OAuth2 server, and logs in through its login page.
func TestMount_CustomProviderWithLocalServer(t *testing.T) {
	t.Parallel()
	// The callback URL must be known before the site starts: reserve a port, then free it for serve.
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

	// DevPort 0: the dev provider on a free port, never the 8084 a parallel test may hold; the IdP
	// is an httptest server on loopback, hence AllowPrivate.
	base := serve(t, dbtest.NewURL(t), true, Settings{URL: site, Providers: Providers{Custom: kit.Secret(custom), AllowPrivate: true}}, addr)
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
