package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/sessions"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// errBroken is what every failing part of these tests returns.
var errBroken = errors.New("broken on purpose")

// brokenAud is the audience whose secret cannot be read: a token for it cannot be signed.
const brokenAud = "broken"

type failingLimiter struct{}

func (failingLimiter) Allow(_ context.Context, recipient, _ string) (time.Duration, error) {
	if recipient == "limiter@example.com" {
		return 0, errBroken
	}
	return 0, nil
}

type failingUsedIDs struct{}

func (failingUsedIDs) Use(context.Context, string, time.Time) (bool, error) { return false, errBroken }

type failingSessions struct{ sessions.Store }

func (failingSessions) Revoke(context.Context, string, time.Time) error { return errBroken }

type failingAvatars struct{ avatar.Store }

func (failingAvatars) Get(context.Context, string) (io.ReadCloser, int, error) {
	return nil, 0, errBroken
}

type failingLogins struct{ provider.TelegramLogins }

func (failingLogins) Start(context.Context, string, provider.TelegramLogin) error { return errBroken }
func (failingLogins) Take(context.Context, string) (provider.TelegramLogin, bool, error) {
	return provider.TelegramLogin{}, false, errBroken
}

// failingSite is a site each of whose parts fails on demand: the secret of brokenAud, the send
// limiter for one address, the used-id set, session revocation, the avatar store, a credential
// checker, a raw-id function, a message template, the messenger's pending logins.
func failingSite(t *testing.T, l logger.L) (*site, *lines) {
	t.Helper()
	files, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, func(o *auth.Options) {
		o.SecretReader = token.SecretFunc(func(aud string) (string, error) {
			if aud == brokenAud {
				return "", errBroken
			}
			return testSecret, nil
		})
		o.Logger = l
		o.SendLimiter = failingLimiter{}
		o.UsedIDs = failingUsedIDs{}
		o.Sessions = failingSessions{sessions.NewMemory(nil)}
		o.AvatarStore = failingAvatars{files}
	})
	if err := s.svc.AddDirectProvider("flaky", provider.CredCheckerFunc(func(string, string) (bool, error) { return false, errBroken })); err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddDirectProviderWithUserIDFunc("noid", provider.CredCheckerFunc(func(string, string) (bool, error) { return true, nil }),
		func(string, *http.Request) string { return "" }); err != nil {
		t.Fatal(err)
	}
	var sent lines
	if err := s.svc.AddVerifProvider("email", "{{.Token}}", provider.SenderFunc(func(_, text string) error { sent.Logf("%s", text); return nil })); err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddVerifProvider("badtmpl", "{{.Missing}}", provider.SenderFunc(func(string, string) error { return nil })); err != nil {
		t.Fatal(err)
	}
	p8, _ := providertest.GenerateP8(t)
	if err := s.svc.AddAppleProvider(provider.AppleConfig{ClientID: "com.example.web", TeamID: "TEAM123456", KeyID: "KEY1234567"},
		appleid.LoadFromBytes(p8)); err != nil {
		t.Fatal(err)
	}
	tw := providertest.NewTwitter(t, "consumer-key", "consumer-secret")
	if err := s.svc.AddCustomHandler(provider.NewTwitter(s.svc.Params(tw.ConsumerKey, tw.ConsumerSecret), provider.TwitterEndpoints{
		RequestTokenURL: tw.RequestTokenURL(), AuthorizeURL: tw.AuthorizeURL(), AccessTokenURL: tw.AccessTokenURL(), InfoURL: tw.InfoURL()})); err != nil {
		t.Fatal(err)
	}
	fake := providertest.NewTelegram(t, botToken, "failing_bot")
	fakeURL, _ := url.Parse(fake.URL())
	tg, err := provider.NewTelegram(context.Background(), s.svc.Params("", ""), provider.TelegramConfig{
		Telegram: provider.NewTelegramAPI(botToken, &http.Client{Transport: telegramAt{fakeURL}}), Logins: failingLogins{},
		PollWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(tg); err != nil {
		t.Fatal(err)
	}
	return s, &sent
}

// failure is one way to make a provider path answer 500.
type failure struct {
	name, method, path, body string
	login                    bool // log in (direct, demo) first: the path needs a session
}

// failures lists a 500 on every provider path: the OAuth 2.0, device-vendor and microblogging
// logins (their handshake cannot be signed), a direct login (a checker failing, a raw id
// missing, the session token not signable), a verified login (the send limiter, the template,
// the used-id set), the messenger login (its pending logins, starting and completing), the
// logouts (session revocation) and the avatar proxy (its store).
func failures(confirmation string) []failure {
	form := `{"user":"demo","passwd":"demo-password"}`
	return []failure{
		{name: "oauth2 login", method: http.MethodGet, path: "/auth/dev/login?site=" + brokenAud},
		{name: "apple login", method: http.MethodGet, path: "/auth/apple/login?site=" + brokenAud},
		{name: "twitter login", method: http.MethodGet, path: "/auth/twitter/login?site=" + brokenAud},
		{name: "direct: checker fails", method: http.MethodPost, path: "/auth/flaky/login", body: form},
		{name: "direct: no raw id", method: http.MethodPost, path: "/auth/noid/login", body: form},
		{name: "direct: token not signable", method: http.MethodPost, path: "/auth/local/login", body: `{"user":"demo","passwd":"demo-password","aud":"` + brokenAud + `"}`},
		{name: "verified: send limiter", method: http.MethodGet, path: "/auth/email/login?user=ada&address=limiter@example.com"},
		{name: "verified: template", method: http.MethodGet, path: "/auth/badtmpl/login?user=ada&address=ada@example.com"},
		{name: "verified: used ids", method: http.MethodGet, path: "/auth/email/login?token=" + confirmation},
		{name: "messenger: start", method: http.MethodGet, path: "/auth/telegram/login"},
		{name: "messenger: complete", method: http.MethodGet, path: "/auth/telegram/login?token=0123456789abcdef0123456789abcdef"},
		{name: "logout", method: http.MethodGet, path: "/auth/logout", login: true},
		{name: "provider logout", method: http.MethodPost, path: "/auth/local/logout", login: true},
		{name: "avatar", method: http.MethodGet, path: "/avatar/" + avatar.AvatarID("someone")},
	}
}

// confirmation asks the verified provider for a confirmation token (the sender keeps the message).
func confirmation(t *testing.T, s *site, sent *lines) string {
	t.Helper()
	if st, _, b := s.get("/auth/email/login?user=ada&address=ada@example.com", nil); st != http.StatusOK {
		t.Fatalf("confirmation request: %d %s", st, b)
	}
	return sent.String()
}

// TestFailures_EveryProvider500IsLoggedWithItsRequestID: each provider path, made to fail inside,
// answers 500 internal_error whose requestId is the X-Request-Id it sent, and the service's
// Logger has an ERROR line carrying that id (and the cause).
func TestFailures_EveryProvider500IsLoggedWithItsRequestID(t *testing.T) {
	t.Parallel()
	var log lines
	s, sent := failingSite(t, &log)
	tok := confirmation(t, s, sent)
	for i, f := range failures(tok) {
		id := "fail-" + strings.ReplaceAll(f.name, " ", "-")
		id = strings.NewReplacer(":", "", ",", "").Replace(id)
		if f.login {
			s.directLogin("")
		}
		hdr := map[string]string{"X-Request-Id": id, "Content-Type": "application/json"}
		if f.login {
			hdr["X-XSRF-TOKEN"] = s.cookie("XSRF-TOKEN")
		}
		var body io.Reader
		if f.body != "" {
			body = strings.NewReader(f.body)
		}
		st, h, b := s.do(s.client, f.method, f.path, body, hdr)
		var e struct{ Code, RequestID string }
		mustJSON(t, b, &e)
		if st != http.StatusInternalServerError || e.Code != "internal_error" || e.RequestID != id || h.Get("X-Request-Id") != id {
			t.Errorf("%d %s: %d %s (X-Request-Id %q); want 500 internal_error with requestId %s", i, f.name, st, b, h.Get("X-Request-Id"), id)
			continue
		}
		if !hasErrorLine(log.String(), id) {
			t.Errorf("%s: no ERROR line with request_id=%s and the cause in the log:\n%s", f.name, id, log.String())
		}
		if strings.Contains(string(b), errBroken.Error()) {
			t.Errorf("%s: the answer carries the cause: %s", f.name, b)
		}
	}
}

// hasErrorLine reports whether log has an ERROR line naming request id and a cause.
func hasErrorLine(log, id string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "level=ERROR") && strings.Contains(l, "request_id="+id+" ") && strings.Contains(l, " err=") {
			return true
		}
	}
	return false
}

// TestFailures_UnderTheServerStack: mounted on the shared root router (request ids, the server's
// logger), a provider's 500 carries the server's request id and is logged on the library's Logger
// with it.
func TestFailures_UnderTheServerStack(t *testing.T) {
	t.Parallel()
	var log lines
	s, _ := failingSite(t, &log)
	var serverLog lines
	authH, _ := s.svc.Handlers()
	h, err := router.Standalone(logger.ToSlog(&serverLog), func(r chi.Router) error { r.Mount("/auth", authH); return nil })
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "/auth/dev/login?site="+brokenAud, nil)
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	id := rec.Header().Get("X-Request-Id")
	if rec.status != http.StatusInternalServerError || id == "" || !strings.Contains(rec.body.String(), `"requestId":"`+id+`"`) {
		t.Fatalf("%d %s (X-Request-Id %q); want 500 with the server's request id", rec.status, rec.body.String(), id)
	}
	if !hasErrorLine(log.String(), id) {
		t.Fatalf("library log has no ERROR line for %s:\n%s\nserver log:\n%s", id, log.String(), serverLog.String())
	}
}

// TestFailures_WithoutALogger: a service given no Logger still writes a 500's ERROR line, to the
// process's standard log (slog.Default()).
func TestFailures_WithoutALogger(t *testing.T) {
	var std lines
	old := slog.Default()
	slog.SetDefault(logger.ToSlog(&std))
	t.Cleanup(func() { slog.SetDefault(old) })
	s, _ := failingSite(t, nil)
	st, _, b := s.get("/auth/dev/login?site="+brokenAud, map[string]string{"X-Request-Id": "no-logger-1"})
	if st != http.StatusInternalServerError {
		t.Fatalf("%d %s; want 500", st, b)
	}
	if !hasErrorLine(std.String(), "no-logger-1") {
		t.Fatalf("standard log has no ERROR line for no-logger-1:\n%s", std.String())
	}
}

// recorder is a minimal ResponseWriter for serving a handler in process.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   strings.Builder
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// TestVerified_NoAudWithAudiences: with Options.Audiences set, a confirmation request without aud
// is for the issuer's audience (it answered 500 before): sent, and its confirmation logs the user
// in for that audience. Where the issuer is not among the audiences it is 403
// audience_not_allowed, as an aud outside them is, never a 500.
func TestVerified_NoAudWithAudiences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		audiences []string
		want      int
	}{
		{"issuer among the audiences", []string{"other", auth.DefaultIssuer}, http.StatusOK},
		{"issuer not among them", []string{"other"}, http.StatusForbidden},
	} {
		var sent lines
		s := newSite(t, func(o *auth.Options) { o.Audiences = tc.audiences })
		if err := s.svc.AddVerifProvider("email", "{{.Token}}", provider.SenderFunc(func(_, text string) error { sent.Logf("%s", text); return nil })); err != nil {
			t.Fatal(err)
		}
		st, _, b := s.get("/auth/email/login?user=ada&address=ada@example.com", nil)
		if st != tc.want {
			t.Fatalf("%s: %d %s; want %d", tc.name, st, b, tc.want)
		}
		if st != http.StatusOK {
			if errCode(t, b) != provider.CodeAudience {
				t.Fatalf("%s: %s; want %s", tc.name, b, provider.CodeAudience)
			}
			continue
		}
		st, _, b = s.get("/auth/email/login?token="+sent.String(), nil)
		var u token.User
		mustJSON(t, b, &u)
		if st != http.StatusOK || u.Audience != auth.DefaultIssuer {
			t.Fatalf("%s: confirmation %d %s; want the user logged in for %s", tc.name, st, b, auth.DefaultIssuer)
		}
	}
}
