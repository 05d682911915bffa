package auth_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/sender"
	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
)

// emailSite is a site whose verified provider "email" sends through the real e-mail sender to a
// real SMTP server.
func emailSite(t *testing.T, mods ...siteOpt) (*site, *smtptest.Server) {
	t.Helper()
	mail := smtptest.Start(t, smtptest.Options{})
	s := newSite(t, mods...)
	email := sender.NewEmail(sender.EmailParams{Host: mail.Host, Port: mail.Port, From: "site <noreply@example.com>"}, nil)
	if err := s.svc.AddVerifProvider("email", `<p>Hello {{.User}}, confirm your login to {{.Site}}: {{.Token}}</p>`, email); err != nil {
		t.Fatal(err)
	}
	return s, mail
}

func sendQuery(user, address, aud string) string {
	q := url.Values{"user": {user}, "address": {address}}
	if aud != "" {
		q.Set("aud", aud)
	}
	return "/auth/email/login?" + q.Encode()
}

// The library's default limiter: five messages to one recipient (letter case and +tags included)
// per window, then 429 too_many_confirmations with Retry-After, as the spec says; a new window
// sends again.
func TestVerified_RecipientLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, mail := emailSite(t, func(o *auth.Options) { o.SendLimiter = provider.NewMemorySendLimiter(0, 0, 0, clock) })
	for i, addr := range []string{"kate@example.com", "Kate@Example.com", "kate+a@example.com", "KATE+b@example.com", "kate@EXAMPLE.COM"} {
		if st, _, b := s.get(sendQuery("kate", addr, ""), nil); st != http.StatusOK {
			t.Fatalf("message %d: %d %s", i+1, st, b)
		}
	}
	st, h, b := s.get(sendQuery("kate", "kate+c@example.com", ""), nil)
	if st != http.StatusTooManyRequests || errCode(t, b) != provider.CodeTooManyConfirmations || h.Get("Retry-After") != "900" {
		t.Fatalf("sixth message: %d Retry-After=%q %s, want 429 too_many_confirmations with Retry-After 900", st, h.Get("Retry-After"), b)
	}
	if n := len(mail.Messages()); n != 5 {
		t.Fatalf("%d messages delivered, want 5", n)
	}
	if st, _, b := s.get(sendQuery("lee", "lee@example.com", ""), nil); st != http.StatusOK {
		t.Fatalf("another recipient: %d %s", st, b)
	}
	mu.Lock()
	now = now.Add(provider.DefaultSendWindow)
	mu.Unlock()
	if st, _, b := s.get(sendQuery("kate", "kate@example.com", ""), nil); st != http.StatusOK {
		t.Fatalf("next window: %d %s", st, b)
	}
}

// One client gets its share of messages over any recipients, then 429.
func TestVerified_ClientLimit(t *testing.T) {
	t.Parallel()
	s, mail := emailSite(t, func(o *auth.Options) { o.SendLimiter = provider.NewMemorySendLimiter(0, 3, 0, nil) })
	for i := range 3 {
		if st, _, b := s.get(sendQuery("u", "u"+strconv.Itoa(i)+"@example.com", ""), nil); st != http.StatusOK {
			t.Fatalf("message %d: %d %s", i+1, st, b)
		}
	}
	if st, _, b := s.get(sendQuery("u", "u9@example.com", ""), nil); st != http.StatusTooManyRequests {
		t.Fatalf("fourth message from one client: %d %s, want 429", st, b)
	}
	if n := len(mail.Messages()); n != 3 {
		t.Fatalf("%d messages delivered, want 3", n)
	}
}

// An address that is not exactly one mailbox is 400 bad_request before anything is sent (it used
// to reach the SMTP client and come back 502 send_failed, or worse be sent).
func TestVerified_AddressIsOneMailbox(t *testing.T) {
	t.Parallel()
	s, mail := emailSite(t)
	for _, addr := range []string{"not-an-address", "a@b.test, evil@x.test", "undisclosed-recipients:;", "friends: a@b.test;",
		"friends: a@b.test, evil@x.test;", "Alice <a@b.test>", "<a@b.test>", "a@b.test (comment)", "a@b.test\r\nBcc: evil@x.test"} {
		if st, _, b := s.get(sendQuery("alice", addr, ""), nil); st != http.StatusBadRequest || errCode(t, b) != provider.CodeBadRequest {
			t.Errorf("address %q: %d %s, want 400 bad_request", addr, st, b)
		}
	}
	if n := len(mail.Messages()); n != 0 {
		t.Fatalf("refused addresses delivered %d messages", n)
	}
}

// The aud named in the message is one of the audiences, or the site's own (the issuer) when there
// are none: never text of the caller's choosing. The subject is the sender's, whatever the caller
// sends.
func TestVerified_AudienceAndSubject(t *testing.T) {
	t.Parallel()
	s, mail := emailSite(t)
	if st, _, b := s.get(sendQuery("alice", "alice@example.com", "Your bank: call now"), nil); st != http.StatusForbidden || errCode(t, b) != provider.CodeAudience {
		t.Fatalf("aud of the caller's choosing: %d %s, want 403 audience_not_allowed", st, b)
	}
	if st, _, b := s.get(sendQuery("Subject: you won", "alice@example.com", auth.DefaultIssuer), nil); st != http.StatusOK {
		t.Fatalf("aud = issuer: %d %s", st, b)
	}
	msgs := mail.Messages()
	if len(msgs) != 1 || !strings.Contains(msgs[0].Data, "Subject: Login confirmation\r\n") ||
		strings.Count(msgs[0].Data, "Subject:") != 2 { // the header, and the user name in the body
		t.Fatalf("message:\n%s", msgs[0].Data)
	}

	withAud, mail2 := emailSite(t, func(o *auth.Options) { o.Audiences = []string{"shop", "blog"} })
	if st, _, b := withAud.get(sendQuery("alice", "alice@example.com", "shop"), nil); st != http.StatusOK {
		t.Fatalf("configured aud: %d %s", st, b)
	}
	if st, _, _ := withAud.get(sendQuery("alice", "alice@example.com", auth.DefaultIssuer), nil); st != http.StatusForbidden {
		t.Fatalf("issuer outside the configured audiences: %d, want 403", st)
	}
	if n := len(mail2.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}
