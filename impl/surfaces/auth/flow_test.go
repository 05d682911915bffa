package auth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func TestDev_LoginFlowAndRedirects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		from     func(s *site) string
		redirect bool
	}{
		{"no from", func(*site) string { return "" }, false},
		{"own host", func(s *site) string { return s.srv.URL + "/app/trace?x=1" }, true},
		{"relative path", func(*site) string { return "/app/trace" }, true},
		{"allowed host", func(*site) string { return "https://partner.example.org/welcome" }, true},
		{"foreign host", func(*site) string { return "https://evil.example.com/steal" }, false},
		{"scheme-relative", func(*site) string { return "//evil.example.com/steal" }, false},
		{"backslash", func(*site) string { return "/\\evil.example.com" }, false},
		{"javascript", func(*site) string { return "javascript:alert(1)" }, false},
		{"userinfo trick", func(s *site) string {
			return "http://" + strings.TrimPrefix(s.srv.URL, "http://") + "@evil.example.com/"
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t, func(o *auth.Options) { o.AllowedRedirectHosts = []string{"partner.example.org"} })
			from := tt.from(s)
			q := "?site=triad"
			if from != "" {
				q += "&from=" + url.QueryEscape(from)
			}
			st, h, b := s.devLogin(q, "alice")
			if tt.redirect {
				if st != http.StatusSeeOther || h.Get("Location") != from {
					t.Fatalf("want 303 to %s, got %d %s %s", from, st, h.Get("Location"), b)
				}
			} else {
				if st != http.StatusOK || h.Get("Location") != "" {
					t.Fatalf("want 200 without redirect, got %d %q", st, h.Get("Location"))
				}
				var u token.User
				mustJSON(t, b, &u)
				if u.Name != "alice" || u.ID != token.UserID("dev", "alice") || u.Email != "alice@example.com" || u.Audience != "triad" {
					t.Fatalf("user %+v", u)
				}
			}
			st, _, b = s.get("/auth/user", s.xsrf())
			if st != 200 || !strings.Contains(string(b), `"name":"alice"`) {
				t.Fatalf("after login: %d %s", st, b)
			}
			if s.cookie("AUTH-HANDSHAKE") != "" {
				t.Fatal("handshake cookie left after the callback")
			}
		})
	}
}

func TestDev_CallbackRefusals(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	// Start a login to get a valid handshake cookie and authorization URL.
	st, h, _ := s.get("/auth/dev/login", nil)
	if st != http.StatusFound {
		t.Fatal(st)
	}
	authURL, _ := url.Parse(h.Get("Location"))
	state := authURL.Query().Get("state")
	if authURL.Query().Get("code_challenge_method") != "S256" || authURL.Query().Get("code_challenge") == "" {
		t.Fatalf("no PKCE: %s", authURL)
	}
	tests := []struct {
		name, query string
		want        int
		code        string
	}{
		{"state mismatch", "?state=forged&code=x", 400, "bad_state"},
		{"provider error", "?state=" + state + "&error=access_denied", 401, "provider_error"},
		{"missing code", "?state=" + state, 400, "bad_request"},
		{"bad code", "?state=" + state + "&code=made-up", 502, "exchange_failed"},
	}
	for _, tt := range tests {
		// Each refusal clears the handshake cookie; put it back so only the tested defect remains.
		hs := s.cookie("AUTH-HANDSHAKE")
		st, _, b := s.get("/auth/dev/callback"+tt.query, nil)
		if st != tt.want || errCode(t, b) != tt.code {
			t.Errorf("%s: %d %s", tt.name, st, b)
		}
		if s.cookie("JWT") != "" {
			t.Fatalf("%s: a session was set", tt.name)
		}
		u, _ := url.Parse(s.srv.URL)
		s.jar.SetCookies(u, []*http.Cookie{{Name: "AUTH-HANDSHAKE", Value: hs, Path: "/"}})
	}
	// Without the handshake cookie (another browser, or a replayed callback) the state is refused.
	u, _ := url.Parse(s.srv.URL)
	s.jar.SetCookies(u, []*http.Cookie{{Name: "AUTH-HANDSHAKE", Value: "", Path: "/", MaxAge: -1}})
	if st, _, b := s.get("/auth/dev/callback?state="+state+"&code=x", nil); st != 400 || errCode(t, b) != "bad_state" {
		t.Fatalf("no handshake: %d %s", st, b)
	}
}

func TestDev_StateWorksOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	_, h, _ := s.get("/auth/dev/login", nil)
	authURL, _ := url.Parse(h.Get("Location"))
	q := authURL.Query()
	form := url.Values{"username": {"bob"}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	_, h, _ = s.do(s.plain, http.MethodPost, authURL.String(), strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	callback := h.Get("Location")
	if st, _, b := s.get(callback, nil); st != 200 {
		t.Fatalf("callback: %d %s", st, b)
	}
	// Replaying the same callback URL: the handshake cookie was consumed, so the state is refused.
	if st, _, b := s.get(callback, nil); st != 400 || errCode(t, b) != "bad_state" {
		t.Fatalf("replayed callback: %d %s", st, b)
	}
}

// TestDev_ServerSpeaksOAuth2 drives the dev OAuth 2.0 server with golang.org/x/oauth2 as any
// client would: authorization URL with PKCE, the login form, code exchange, user info.
func TestDev_ServerSpeaksOAuth2(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	dev := s.svc.DevProvider()
	conf := dev.OAuth2()
	verifier := oauth2.GenerateVerifier()
	authURL, _ := url.Parse(conf.AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier)))
	q := authURL.Query()
	form := url.Values{"username": {"carol"}, "state": {"st4te"}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	st, h, b := s.do(s.plain, http.MethodPost, authURL.String(), strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if st != http.StatusSeeOther {
		t.Fatalf("authorize: %d %s", st, b)
	}
	cb, _ := url.Parse(h.Get("Location"))
	if cb.Query().Get("state") != "st4te" || !strings.HasSuffix(cb.Path, "/auth/dev/callback") {
		t.Fatalf("redirect %s", cb)
	}
	ctx := context.Background()
	if _, err := conf.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption("wrong-verifier-wrong-verifier-wrong-verifier")); err == nil {
		t.Fatal("wrong PKCE verifier accepted")
	}
	// The failed attempt consumed the code: a code works once, so get a new one.
	st, h, _ = s.do(s.plain, http.MethodPost, authURL.String(), strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	cb, _ = url.Parse(h.Get("Location"))
	tok, err := conf.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil || st != http.StatusSeeOther {
		t.Fatalf("exchange: %v", err)
	}
	userInfo := func() (int, string) {
		resp, err := conf.Client(ctx, tok).Get(dev.URL() + "/user")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, body := userInfo(); st != 200 || !strings.Contains(body, `"name":"carol"`) || !strings.Contains(body, `"email":"carol@example.com"`) {
		t.Fatalf("user info: %d %s", st, body)
	}
	if _, err := conf.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("code reused")
	}
	// A replayed code means it leaked: the token it bought is revoked (RFC 6749 §4.1.2).
	if st, body := userInfo(); st != http.StatusUnauthorized {
		t.Fatalf("user info after the code's replay: %d %s", st, body)
	}
	// The dev server refuses to redirect anywhere but the registered callback.
	evil := url.Values{"username": {"x"}, "state": {"s"}, "redirect_uri": {"https://evil.example.com/cb"}, "code_challenge": {"c"}}
	if st, _, _ := s.do(s.plain, http.MethodPost, authURL.String(), strings.NewReader(evil.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); st != 400 {
		t.Fatalf("foreign redirect_uri: %d", st)
	}
}

var tokenInMessage = regexp.MustCompile(`token=([A-Za-z0-9_\-.]+)`)

func TestVerified_SendConfirmReplay(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent []string
	s := newSite(t)
	err := s.svc.AddVerifProvider("email", `Hi {{.User}} ({{.Address}}) of {{.Site}}: {{.Token}} — link ?token={{.Token}}`,
		provider.SenderFunc(func(address, text string) error {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, address+"|"+text)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	from := url.QueryEscape(s.srv.URL + "/app/trace")
	st, _, b := s.get("/auth/email/login?user=<b>alice</b>&address=alice@example.com&aud=triad&from="+from, nil)
	if st != 200 || !strings.Contains(string(b), `"status":"sent"`) {
		t.Fatalf("send: %d %s", st, b)
	}
	mu.Lock()
	msg := sent[0]
	mu.Unlock()
	if !strings.HasPrefix(msg, "alice@example.com|Hi &lt;b&gt;alice&lt;/b&gt; (alice@example.com) of triad: ") {
		t.Fatalf("message %q", msg)
	}
	m := tokenInMessage.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no token in %q", msg)
	}
	confirm := m[1]
	// The confirmation token never authenticates by itself.
	if st, _, _ := s.get("/auth/user", map[string]string{"X-JWT": confirm}); st != 401 {
		t.Fatalf("confirmation token accepted as a session: %d", st)
	}
	// Change one character in the middle of the payload to one it surely is not (an edit of the
	// signature's last characters can leave the decoded bytes unchanged).
	i := strings.Index(confirm, ".") + 5
	swap := byte('A')
	if confirm[i] == 'A' {
		swap = 'B'
	}
	tampered := confirm[:i] + string(swap) + confirm[i+1:]
	if st, _, b := s.get("/auth/email/login?token="+tampered, nil); st != 403 || errCode(t, b) != "bad_confirmation" {
		t.Fatalf("tampered: %d %s", st, b)
	}
	st, h, b := s.get("/auth/email/login?token="+confirm+"&sess=1", nil)
	if st != http.StatusSeeOther || h.Get("Location") != s.srv.URL+"/app/trace" {
		t.Fatalf("confirm: %d %s %s", st, h.Get("Location"), b)
	}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.MaxAge != 0 {
			t.Fatalf("sess=1 gave a persistent cookie %+v", c)
		}
	}
	st, _, b = s.get("/auth/user", s.xsrf())
	if st != 200 || !strings.Contains(string(b), `"email":"alice@example.com"`) || !strings.Contains(string(b), token.UserID("email", "alice@example.com")) {
		t.Fatalf("user: %d %s", st, b)
	}
	if st, _, b := s.get("/auth/email/login?token="+confirm, nil); st != 403 || errCode(t, b) != "confirmation_used" {
		t.Fatalf("replay: %d %s", st, b)
	}
	if st, _, b := s.get("/auth/email/login?user=bob", nil); st != 400 || errCode(t, b) != "bad_request" {
		t.Fatalf("missing address: %d %s", st, b)
	}
}

// TestVerified_ConcurrentReplay races N confirmations of one token: exactly one logs in.
func TestVerified_ConcurrentReplay(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	var confirm atomic.Value
	if err := s.svc.AddVerifProvider("email", `{{.Token}}`, provider.SenderFunc(func(_, text string) error {
		confirm.Store(text)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if st, _, b := s.get("/auth/email/login?user=dan&address=dan@example.com", nil); st != 200 {
		t.Fatalf("send: %d %s", st, b)
	}
	const n = 16
	var ok, used atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.client.Get(s.srv.URL + "/auth/email/login?token=" + confirm.Load().(string))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				ok.Add(1)
			case 403:
				used.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || used.Load() != n-1 {
		t.Fatalf("logins %d, refusals %d", ok.Load(), used.Load())
	}
}

func TestVerified_SendFailure(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if err := s.svc.AddVerifProvider("sms", `{{.Token}}`, provider.SenderFunc(func(string, string) error { return io.ErrUnexpectedEOF })); err != nil {
		t.Fatal(err)
	}
	if st, _, b := s.get("/auth/sms/login?user=eve&address=555", nil); st != 502 || errCode(t, b) != "send_failed" {
		t.Fatalf("send failure: %d %s", st, b)
	}
}

func TestVerified_ExpiredConfirmationRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if err := s.svc.AddVerifProvider("email", `{{.Token}}`, provider.SenderFunc(func(string, string) error { return nil })); err != nil {
		t.Fatal(err)
	}
	c := token.Claims{Handshake: &token.Handshake{ID: "eve::eve@example.com", Provider: "email"}}
	c.ID = "confirm-1"
	c.Issuer = auth.DefaultIssuer
	c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Second))
	expired := forge(t, jwt.SigningMethodHS256, []byte(testSecret), c)
	if st, _, b := s.get("/auth/email/login?token="+expired, nil); st != 403 || errCode(t, b) != "bad_confirmation" {
		t.Fatalf("expired confirmation: %d %s", st, b)
	}
	c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(time.Minute))
	if st, _, b := s.get("/auth/email/login?token="+forge(t, jwt.SigningMethodHS256, []byte(testSecret), c), nil); st != 200 {
		t.Fatalf("fresh confirmation: %d %s", st, b)
	}
}

func TestDirect_CheckerErrorIsOpaque500(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	if err := s.svc.AddDirectProvider("ldap", provider.CredCheckerFunc(func(string, string) (bool, error) {
		return false, errors.New("dial tcp 10.0.0.5:389: connection refused")
	})); err != nil {
		t.Fatal(err)
	}
	st, _, b := s.get("/auth/ldap/login?user=a&passwd=b", nil)
	if st != 500 || errCode(t, b) != "internal_error" || strings.Contains(string(b), "10.0.0.5") {
		t.Fatalf("checker error: %d %s", st, b)
	}
}

// TestVerified_ConfirmationBoundToProvider: a confirmation sent by one verified provider does not
// log in through another, whose users it would otherwise impersonate (same name, same address).
func TestVerified_ConfirmationBoundToProvider(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	var confirm atomic.Value
	capture := provider.SenderFunc(func(_, text string) error { confirm.Store(text); return nil })
	for _, name := range []string{"email", "sms"} {
		if err := s.svc.AddVerifProvider(name, `{{.Token}}`, capture); err != nil {
			t.Fatal(err)
		}
	}
	if st, _, b := s.get("/auth/sms/login?user=eve&address=eve@example.com", nil); st != 200 {
		t.Fatalf("send: %d %s", st, b)
	}
	tok := confirm.Load().(string)
	if st, _, b := s.get("/auth/email/login?token="+tok, nil); st != 403 || errCode(t, b) != "bad_confirmation" || s.cookie("JWT") != "" {
		t.Fatalf("sms confirmation at the email provider: %d %s", st, b)
	}
	st, _, b := s.get("/auth/sms/login?token="+tok, nil)
	if st != 200 || !strings.Contains(string(b), token.UserID("sms", "eve@example.com")) {
		t.Fatalf("confirmation at its own provider: %d %s", st, b)
	}
}

// TestOAuth2_StateBoundToProvider: a login started with one OAuth 2.0 provider cannot be finished
// at another provider's callback (OAuth mix-up): the handshake names its provider.
func TestOAuth2_StateBoundToProvider(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	dev := s.svc.DevProvider().OAuth2()
	// A second OAuth 2.0 provider; it would accept any code the dev server issues for it.
	other := provider.NewOAuth2Handler(s.svc.Params("", ""), provider.OAuth2Config{Name: "other", Endpoint: dev.Endpoint,
		InfoURL: s.svc.DevProvider().URL() + "/user", PKCE: true,
		MapUser: func(d provider.UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: d.Value("name")}
		}})
	if err := s.svc.AddCustomHandler(other); err != nil {
		t.Fatal(err)
	}
	st, h, _ := s.get("/auth/dev/login", nil)
	if st != http.StatusFound {
		t.Fatal(st)
	}
	loc, _ := url.Parse(h.Get("Location"))
	state := loc.Query().Get("state")
	if st, _, b := s.get("/auth/other/callback?code=x&state="+url.QueryEscape(state), nil); st != 400 || errCode(t, b) != "bad_state" {
		t.Fatalf("dev state at another provider's callback: %d %s", st, b)
	}
	if s.cookie("JWT") != "" {
		t.Fatal("a session was set")
	}
}

// TestDev_SessionOnlyLogin: session=1 on an OAuth login survives the round trip through the
// provider (it rides in the handshake) and gives session cookies.
func TestDev_SessionOnlyLogin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	st, h, b := s.devLogin("?session=1", "sam")
	if st != 200 {
		t.Fatalf("callback: %d %s", st, b)
	}
	cookies := (&http.Response{Header: h}).Cookies()
	var n int
	for _, c := range cookies {
		if c.Name == "JWT" || c.Name == "XSRF-TOKEN" {
			n++
			if c.MaxAge != 0 || !c.Expires.IsZero() {
				t.Errorf("cookie %s is persistent: %+v", c.Name, c)
			}
		}
	}
	if n != 2 {
		t.Fatalf("cookies %v", cookies)
	}
	claims, err := s.svc.TokenService().Parse(s.cookie("JWT"))
	if err != nil || !claims.SessionOnly {
		t.Fatalf("token: %v %+v", err, claims)
	}
}
