package auth_test

// Tests written as a reader of the seed (auth-service.md, "Provider configuration") writes code:
// the field names of its tables, go-pkgz/auth's shapes. Each registers through the seed's shape
// and then logs a user in (or, for the device vendor, whose API the seed's reader does not fake,
// checks what registration does).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// lines is a Logf logger of the test's own that keeps what it is given.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, fmt.Sprintf(format, args...))
}

func (l *lines) String() string { l.mu.Lock(); defer l.mu.Unlock(); return strings.Join(l.all, "\n") }

// TestSeed_LocalServerAndCustomProvider: the local OAuth 2.0 server with the seed's URL,
// WithLoginPage, LoginPageHandler (a function) and logger, and a custom provider registered as
// Name + Client{Cid, Csecret} + CustomHandlerOpt{Endpoint{AuthURL, TokenURL}, InfoURL, MapUserFn,
// Scopes} against it. A user logs in through the site's own login page; MapUserFn names them.
func TestSeed_LocalServerAndCustomProvider(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ts := httptest.NewUnstartedServer(nil)
	var log lines
	srv, err := oauthserver.New(oauthserver.Options{
		URL:           "http://" + ts.Listener.Addr().String(), // server URL with port
		WithLoginPage: true,
		LoginPageHandler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<h1>Custom login</h1><form method="post"><input name="username"><button>Log in</button></form>`)
		},
		Logger: logger.Func(log.Logf),
		// What triad asks besides the seed's fields (deny by default): the clients the server
		// serves, and who may log in (here anyone, as with a development server).
		Clients: []oauthserver.Client{{ID: "cid", Secret: "csecret", RedirectURIs: []string{s.srv.URL + "/auth/custom123/callback"}}},
		AnyUser: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)

	err = s.svc.AddCustomOAuth2Provider("custom123", auth.Client{Cid: "cid", Csecret: "csecret"}, provider.CustomHandlerOpt{
		Endpoint: oauth2.Endpoint{
			AuthURL:  srv.Endpoint().AuthURL,
			TokenURL: srv.Endpoint().TokenURL,
		},
		InfoURL: srv.InfoURL(),
		MapUserFn: func(data provider.UserData, _ []byte) token.User {
			return token.User{ID: data.Value("id"), Name: "custom:" + data.Value("name")}
		},
		Scopes: []string{"user:email"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if st, _, b := s.get("/auth/list", nil); st != http.StatusOK || !strings.Contains(string(b), `"custom123"`) {
		t.Fatalf("list: %d %s", st, b)
	}

	st, h, b := s.get("/auth/custom123/login", nil)
	if st != http.StatusFound {
		t.Fatalf("login: %d %s", st, b)
	}
	authorize := h.Get("Location")
	st, _, b = s.do(s.plain, http.MethodGet, authorize, nil, nil)
	if st != http.StatusOK || !strings.Contains(string(b), "Custom login") {
		t.Fatalf("the server's login page: %d %s; want the LoginPageHandler's", st, b)
	}
	st, h, b = s.do(s.plain, http.MethodPost, authorize, strings.NewReader(url.Values{"username": {"ada"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if st/100 != 3 || !strings.HasPrefix(h.Get("Location"), s.srv.URL+"/auth/custom123/callback?") {
		t.Fatalf("login form: %d %s to %q", st, b, h.Get("Location"))
	}
	st, _, b = s.get(h.Get("Location"), nil)
	if st != http.StatusOK || !strings.Contains(string(b), `"name":"custom:ada"`) || !strings.Contains(string(b), `"id":"custom123_`) {
		t.Fatalf("callback: %d %s; want custom:ada logged in through custom123", st, b)
	}

	// The server's logger hears of a refusal (an unknown client).
	q := url.Values{"client_id": {"stranger"}, "response_type": {"code"}, "redirect_uri": {"http://elsewhere.example/cb"}}
	if st, _, _ := s.do(s.plain, http.MethodGet, srv.Endpoint().AuthURL+"?"+q.Encode(), nil, nil); st/100 == 2 {
		t.Fatalf("an unknown client was served: %d", st)
	}
	if !strings.Contains(log.String(), "oauthserver: authorization refused") {
		t.Errorf("the Logf logger got %q, want the refusal", log.String())
	}
}

// TestSeed_AppleProvider: the device-vendor config (ClientID, TeamID, KeyID, ResponseMode) and a
// private-key loader; registration loads the key at call time and returns an error if loading
// fails. A registered provider sends the browser to Apple with form_post.
func TestSeed_AppleProvider(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	cfg := provider.AppleConfig{
		ClientID: "com.example.web", // the Services ID
		TeamID:   "TEAM123456",
		KeyID:    "KEY1234567",
	}
	missing := filepath.Join(t.TempDir(), "no-such-key.p8")
	if err := s.svc.AddAppleProvider(cfg, provider.LoadApplePrivateKeyFromFile(missing)); err == nil {
		t.Fatal("registration with a key that cannot be loaded succeeded")
	}
	if _, ok := s.svc.Provider("apple"); ok {
		t.Fatal("a failed registration left a provider behind")
	}
	p8, _ := providertest.GenerateP8(t)
	keyFile := filepath.Join(t.TempDir(), "AuthKey_KEY1234567.p8")
	if err := os.WriteFile(keyFile, p8, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddAppleProvider(cfg, provider.LoadApplePrivateKeyFromFile(keyFile)); err != nil {
		t.Fatal(err)
	}
	st, h, b := s.get("/auth/apple/login", nil)
	u, err := url.Parse(h.Get("Location"))
	if st != http.StatusFound || err != nil || u.Host != "appleid.apple.com" {
		t.Fatalf("login: %d %s to %q; want 302 to Apple", st, b, h.Get("Location"))
	}
	if q := u.Query(); q.Get("client_id") != cfg.ClientID || q.Get("response_mode") != "form_post" {
		t.Fatalf("authorization request %s: want client_id %s and the default response_mode form_post", u.RawQuery, cfg.ClientID)
	}
}

// telegramAt sends every request of a client to the fake Bot API instead of api.telegram.org.
type telegramAt struct{ fake *url.URL }

func (a telegramAt) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = a.fake.Scheme, a.fake.Host
	r.Host = a.fake.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestSeed_TelegramHandler: the messenger provider handler as the seed lists it (ProviderName,
// SuccessMsg, ErrorMsg, the messenger API built from the bot token and an HTTP client, a logger,
// the token service, the avatar saver), run in the background and registered as a custom handler.
// A user confirms in the messenger and the login check then sets the session.
func TestSeed_TelegramHandler(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := providertest.NewTelegram(t, botToken, "seed_login_bot")
	fakeURL, _ := url.Parse(fake.URL())
	var log lines

	telegram := provider.TelegramHandler{
		ProviderName: "telegram",
		ErrorMsg:     "❌ Invalid auth request. Please try clicking link again.",
		SuccessMsg:   "✅ You have successfully authenticated!",
		Telegram:     provider.NewTelegramAPI(botToken, &http.Client{Transport: telegramAt{fakeURL}}),
		L:            &log,
		TokenService: s.svc.TokenService(),
		AvatarSaver:  s.svc.AvatarProxy(), // nil here: the site has no avatar store
	}
	if err := s.svc.AddCustomHandler(&telegram); err != nil {
		t.Fatal(err)
	}
	// Before Run has reached the messenger, the login says so (503, retry).
	if st, _, b := s.get("/auth/telegram/login", nil); st != http.StatusServiceUnavailable || errCode(t, b) != "provider_starting" {
		t.Fatalf("login before Run: %d %s; want 503 provider_starting", st, b)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- telegram.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	var start struct{ Bot, Token string }
	waitUntil(t, func() bool {
		st, _, b := s.get("/auth/telegram/login", nil)
		return st == http.StatusOK && json.Unmarshal(b, &start) == nil
	})
	if start.Bot != "seed_login_bot" || start.Token == "" {
		t.Fatalf("login start: bot %q token %q", start.Bot, start.Token)
	}
	if st, _, b := s.get("/auth/telegram/login?token="+start.Token, nil); st != http.StatusNotFound {
		t.Fatalf("check before confirming: %d %s; want 404", st, b)
	}
	fake.UserSends(providertest.TelegramUser{ID: 4242, FirstName: "Ada", Username: "ada"}, "/start "+start.Token)
	var body []byte
	waitUntil(t, func() bool {
		var st int
		st, _, body = s.get("/auth/telegram/login?token="+start.Token, nil)
		return st == http.StatusOK
	})
	if !strings.Contains(string(body), `"name":"Ada"`) || s.cookie("JWT") == "" {
		t.Fatalf("login: %s (JWT cookie %q)", body, s.cookie("JWT"))
	}
	waitUntil(t, func() bool {
		for _, m := range fake.Sent() {
			if m.ChatID == 4242 && m.Text == telegram.SuccessMsg {
				return true
			}
		}
		return false
	})
	// An unknown request gets ErrorMsg in the messenger.
	fake.UserSends(providertest.TelegramUser{ID: 77, FirstName: "Eve"}, "/start not-a-request")
	waitUntil(t, func() bool {
		for _, m := range fake.Sent() {
			if m.ChatID == 77 && m.Text == telegram.ErrorMsg {
				return true
			}
		}
		return false
	})
	if st, _, b := s.get("/auth/telegram/logout", nil); st != http.StatusOK || s.cookie("JWT") != "" {
		t.Fatalf("logout: %d %s", st, b)
	}
}

// botToken is the seed test's bot: id 5151, a secret that never leaves the server.
const botToken = "5151:seed-bot-secret"

// waitUntil polls ok for up to 10 s.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
