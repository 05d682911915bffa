package auth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// startDevLogin begins a dev login and returns the state the callback must carry.
func startDevLogin(t *testing.T, s *site) string {
	t.Helper()
	st, h, b := s.get("/auth/dev/login", nil)
	if st != http.StatusFound {
		t.Fatalf("dev login: %d %s", st, b)
	}
	u, err := url.Parse(h.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("state")
}

// confirmationSite is a site with a verified provider "email" whose messages the test reads.
func confirmationSite(t *testing.T) (*site, func() string) {
	t.Helper()
	s := newSite(t)
	var mu sync.Mutex
	var last string
	err := s.svc.AddVerifProvider("email", `{{.Token}}`, provider.SenderFunc(func(_, text string) error {
		mu.Lock()
		defer mu.Unlock()
		last = text
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if st, _, b := s.get("/auth/email/login?user=alice&address=alice@example.com", nil); st != http.StatusOK {
		t.Fatalf("send: %d %s", st, b)
	}
	return s, func() string { mu.Lock(); defer mu.Unlock(); return last }
}

// TestErrorCodes_EveryEnumCodeIsSent holds the ApiError.code enum of api/auth.yaml to what is
// sent: each code the library answers is triggered here through its handlers (every answer
// validated against the spec by the site's client); the codes only the server around the library
// answers (its spec validator, its database, its Telegram wiring) are named with the test that
// triggers them. The enum must be exactly the union, so a code that can no longer happen, or a
// new one, fails until the spec and these tables agree.
func TestErrorCodes_EveryEnumCodeIsSent(t *testing.T) {
	t.Parallel()
	json := map[string]string{"Content-Type": "application/json"}
	tests := map[string]struct {
		status  int
		trigger func(t *testing.T) (int, []byte)
	}{
		"unsupported_media_type": {http.StatusUnsupportedMediaType, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			st, _, b := s.do(s.client, "POST", "/auth/local/login", strings.NewReader("user=demo"), map[string]string{"Content-Type": "text/plain"})
			return st, b
		}},
		"request_too_large": {http.StatusRequestEntityTooLarge, func(t *testing.T) (int, []byte) {
			// The body cap is the embedding server's (web.LimitBody, as cmd/server sets it); the
			// library answers a body cut by it with 413.
			s := newSite(t)
			authH, _ := s.svc.Handlers()
			r := chi.NewRouter()
			r.Use(web.LimitBody(1 << 20))
			r.Mount("/auth", authH)
			capped := httptest.NewServer(r)
			t.Cleanup(capped.Close)
			body := `{"user":"demo","passwd":"` + strings.Repeat("x", 2<<20) + `"}`
			st, _, b := s.do(s.client, "POST", capped.URL+"/auth/local/login", strings.NewReader(body), json)
			return st, b
		}},
		"unauthorized": {http.StatusUnauthorized, func(t *testing.T) (int, []byte) {
			st, _, b := newSite(t).get("/auth/user", nil)
			return st, b
		}},
		"not_found": {http.StatusNotFound, func(t *testing.T) (int, []byte) {
			st, _, b := newSite(t).get("/avatar/0000000000000000000000000000000000000000.image", nil)
			return st, b
		}},
		"internal_error": {http.StatusInternalServerError, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			if err := s.svc.AddDirectProvider("ldap", provider.CredCheckerFunc(func(string, string) (bool, error) {
				return false, errors.New("directory unreachable")
			})); err != nil {
				t.Fatal(err)
			}
			st, _, b := s.get("/auth/ldap/login?user=a&passwd=b", nil)
			return st, b
		}},
		"bad_request": {http.StatusBadRequest, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			st, _, b := s.do(s.client, "POST", "/auth/local/login", strings.NewReader(`{"user":"demo"}`), json)
			return st, b
		}},
		"unknown_provider": {http.StatusBadRequest, func(t *testing.T) (int, []byte) {
			st, _, b := newSite(t).get("/auth/nosuch/login", nil)
			return st, b
		}},
		"bad_state": {http.StatusBadRequest, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			startDevLogin(t, s)
			st, _, b := s.get("/auth/dev/callback?state=forged&code=x", nil)
			return st, b
		}},
		"too_many_attempts": {http.StatusTooManyRequests, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			for range 10 {
				s.get("/auth/local/login?user=demo&passwd=wrong", nil)
			}
			st, _, b := s.get("/auth/local/login?user=demo&passwd=demo-password", nil)
			return st, b
		}},
		"bad_credentials": {http.StatusForbidden, func(t *testing.T) (int, []byte) {
			st, _, b := newSite(t).get("/auth/local/login?user=demo&passwd=wrong", nil)
			return st, b
		}},
		"bad_confirmation": {http.StatusForbidden, func(t *testing.T) (int, []byte) {
			s, _ := confirmationSite(t)
			st, _, b := s.get("/auth/email/login?token=not.a.token", nil)
			return st, b
		}},
		"confirmation_used": {http.StatusForbidden, func(t *testing.T) (int, []byte) {
			s, last := confirmationSite(t)
			if st, _, b := s.get("/auth/email/login?token="+last(), nil); st != http.StatusOK {
				t.Fatalf("first confirmation: %d %s", st, b)
			}
			st, _, b := s.get("/auth/email/login?token="+last(), nil)
			return st, b
		}},
		"audience_not_allowed": {http.StatusForbidden, func(t *testing.T) (int, []byte) {
			s := newSite(t, func(o *auth.Options) { o.Audiences = []string{"triad"} })
			st, _, b := s.get("/auth/local/login?user=demo&passwd=demo-password&aud=alien", nil)
			return st, b
		}},
		"provider_error": {http.StatusUnauthorized, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			st, _, b := s.get("/auth/dev/callback?error=access_denied&state="+startDevLogin(t, s), nil)
			return st, b
		}},
		"exchange_failed": {http.StatusBadGateway, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			st, _, b := s.get("/auth/dev/callback?code=made-up&state="+startDevLogin(t, s), nil)
			return st, b
		}},
		"userinfo_failed": {http.StatusBadGateway, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			fake := providertest.NewOAuth2(t, providertest.Google, "cid", "secret")
			fake.Fail(providertest.Failures{Info: true})
			if err := s.svc.AddCustomProvider(provider.CustomOAuth2{Name: "sso", Cid: "cid", Csecret: "secret",
				AuthURL: fake.AuthURL(), TokenURL: fake.TokenURL(), InfoURL: fake.InfoURL(), Scopes: []string{"openid"},
				MapUserFn: func(d provider.UserData, _ []byte) token.User { return token.User{ID: d.Value("sub")} }}); err != nil {
				t.Fatal(err)
			}
			// login → the provider (which approves at once) → the callback, as a browser follows them.
			_, h, _ := s.get("/auth/sso/login", nil)
			st, h, b := s.do(s.plain, "GET", h.Get("Location"), nil, nil)
			if st/100 != 3 {
				t.Fatalf("provider authorization: %d %s", st, b)
			}
			st, _, b = s.get(h.Get("Location"), nil)
			return st, b
		}},
		"send_failed": {http.StatusBadGateway, func(t *testing.T) (int, []byte) {
			s := newSite(t)
			if err := s.svc.AddVerifProvider("sms", `{{.Token}}`, provider.SenderFunc(func(string, string) error { return io.ErrUnexpectedEOF })); err != nil {
				t.Fatal(err)
			}
			st, _, b := s.get("/auth/sms/login?user=eve&address=555", nil)
			return st, b
		}},
		"provider_starting": {http.StatusServiceUnavailable, func(t *testing.T) (int, []byte) {
			// A messenger handler built the seed's way, registered before its Run has started.
			s := newSite(t)
			h := &provider.TelegramHandler{ProviderName: "tg", TokenService: s.svc.TokenService()}
			if err := s.svc.AddCustomHandler(h); err != nil {
				t.Fatal(err)
			}
			st, _, b := s.get("/auth/tg/login", nil)
			return st, b
		}},
		"too_many_confirmations": {http.StatusTooManyRequests, func(t *testing.T) (int, []byte) {
			s := newSite(t, func(o *auth.Options) { o.SendLimiter = provider.NewMemorySendLimiter(1, 0, 0, nil) })
			if err := s.svc.AddVerifProvider("sms", `{{.Token}}`, provider.SenderFunc(func(string, string) error { return nil })); err != nil {
				t.Fatal(err)
			}
			s.get("/auth/sms/login?user=eve&address=555", nil)
			st, _, b := s.get("/auth/sms/login?user=eve&address=555", nil)
			return st, b
		}},
	}
	// Codes the library never answers itself: the server that mounts it does.
	elsewhere := map[string]string{
		"validation_failed":    "impl/surfaces/auth/httpapi TestMount_CodesOfTheServer (the spec validator the server puts in front of the library)",
		"database_unavailable": "impl/surfaces/auth/httpapi TestMount_CodesOfTheServer (the server's PostgreSQL stopped)",
		"not_confirmed":        "impl/surfaces/auth/httpapi TestMount_CodesOfTheServer (the messenger provider the server configures)",
	}
	var all []string
	for code := range tests {
		all = append(all, code)
	}
	for code := range elsewhere {
		if _, dup := tests[code]; dup {
			t.Errorf("%s is both triggered here and named as triggered elsewhere", code)
		}
		all = append(all, code)
	}
	slices.Sort(all)
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	enum := api.Known(spec.Components.Schemas["ApiError"].Value.Properties["code"].Value)
	slices.Sort(enum)
	if !slices.Equal(enum, all) {
		t.Fatalf("ApiError.code enum %q, codes accounted for here %q: make them the same", enum, all)
	}
	for code, tc := range tests {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			st, b := tc.trigger(t)
			if st != tc.status || errCode(t, b) != code {
				t.Fatalf("got %d %s, want %d %s", st, b, tc.status, code)
			}
			// A code every surface shares carries its one message, whichever layer refused.
			if want, shared := web.OneMessage(code); shared {
				var e struct{ Message string }
				mustJSON(t, b, &e)
				if e.Message != want {
					t.Fatalf("%s answered with message %q, want its one message %q", code, e.Message, want)
				}
			}
		})
	}
}
