package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// fromAddr returns an HTTP client whose connections leave from 127.0.0.n, so the server sees a
// distinct client address per n (Linux routes all of 127/8 to loopback).
func fromAddr(n int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(n))}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// confirmAnswer is one answer of the verified login's send step.
type confirmAnswer struct {
	status     int
	code       string
	retryAfter string
	body       string
}

// askConfirmation asks base's "email" provider, from client, to mail user at address (aud omitted
// when empty).
func askConfirmation(t *testing.T, c *http.Client, base, user, address, aud string) confirmAnswer {
	t.Helper()
	q := url.Values{"user": {user}, "address": {address}}
	if aud != "" {
		q.Set("aud", aud)
	}
	resp, err := c.Get(base + "/auth/email/login?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Code string }
	_ = json.Unmarshal(b, &e)
	return confirmAnswer{resp.StatusCode, e.Code, resp.Header.Get("Retry-After"), string(b)}
}

// The verified e-mail login as an attacker uses it, against two replicas of the built binary on one
// database and a real SMTP server: requests from 12 client addresses get 5 messages to one victim
// in all, the rest 429 with Retry-After; one address gets its 30 messages over any recipients,
// then 429 (while another address still gets through); an address that is not exactly one mailbox
// is 400 with the shared error body and sends nothing; an aud of the caller's choosing is 403;
// the caller's text never reaches the subject.
func TestBinary_ConfirmationMailIsNoRelay(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t, smtptest.Options{})
	dbURL := dbtest.NewURL(t)
	args := []string{"-database-url", dbURL,
		"-auth-smtp-host", mail.Host, "-auth-smtp-port", strconv.Itoa(mail.Port), "-auth-smtp-starttls=false",
		"-auth-smtp-from", "triad <noreply@example.com>"}
	args = append(prodArgs(), args...) // prod's limits (dev mode's are generous)
	a, b := startBinary(t, args...), startBinary(t, args...)
	for _, s := range []*binServer{a, b} {
		waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })
	}

	// One victim, twelve clients, two replicas; letter case and +tags are the same recipient.
	victims := []string{"victim@example.test", "Victim@Example.TEST", "victim+1@example.test"}
	var ok, refused int
	for i := range 12 {
		s := []*binServer{a, b}[i%2]
		got := askConfirmation(t, fromAddr(10+i), s.base, "alice", victims[i%3], "")
		switch {
		case got.status == http.StatusOK:
			ok++
		case got.status == http.StatusTooManyRequests && got.code == "too_many_confirmations" && got.retryAfter != "":
			refused++
			if secs, _ := strconv.Atoi(got.retryAfter); secs < 1 || secs > 900 {
				t.Fatalf("Retry-After %q, want 1-900 seconds", got.retryAfter)
			}
		default:
			t.Fatalf("request %d for the victim: %+v, want 200 or 429 too_many_confirmations with Retry-After", i, got)
		}
	}
	n := 0
	for _, m := range mail.Messages() {
		if strings.HasSuffix(strings.ToLower(m.To), "@example.test") && strings.HasPrefix(strings.ToLower(m.To), "victim") {
			n++
		}
	}
	if ok != 5 || refused != 7 || n != 5 {
		t.Fatalf("12 clients asked for the victim: %d sent, %d refused, %d delivered; want 5, 7, 5", ok, refused, n)
	}

	// Nine spellings of one Gmail mailbox are one recipient: 5 messages in all.
	gmail := []string{"janedoe@gmail.com", "j.a.n.e.d.o.e@gmail.com", "jane.doe@gmail.com", "janedoe@googlemail.com",
		"JaneDoe@Gmail.com", "janedoe+news@gmail.com", "\uff4a\uff41\uff4e\uff45\uff44\uff4f\uff45@gmail.com",
		"Jane.Doe+x@googlemail.com", "j.a.n.e.d.o.e@googlemail.com"}
	sent := 0
	for i, addr := range gmail {
		got := askConfirmation(t, fromAddr(30+i), []*binServer{a, b}[i%2].base, "jane", addr, "")
		switch {
		case got.status == http.StatusOK:
			sent++
		case got.status != http.StatusTooManyRequests || got.code != "too_many_confirmations":
			t.Fatalf("%q: %+v, want 200 or 429 too_many_confirmations", addr, got)
		}
	}
	delivered := 0
	for _, m := range mail.Messages() {
		if strings.Contains(strings.ToLower(m.To), "mail.com") {
			delivered++
		}
	}
	if sent != 5 || delivered != 5 {
		t.Fatalf("nine spellings of one Gmail mailbox: %d sent, %d delivered; want 5 (the per-recipient cap)", sent, delivered)
	}

	// One client, many recipients: its 30, then 429; another client is not affected.
	spray := fromAddr(2)
	for i := range 31 {
		got := askConfirmation(t, spray, []*binServer{a, b}[i%2].base, "alice", "r"+strconv.Itoa(i)+"@example.test", "")
		if want := map[bool]int{true: 200, false: 429}[i < 30]; got.status != want {
			t.Fatalf("message %d from one client: %+v, want %d", i+1, got, want)
		}
	}
	if got := askConfirmation(t, fromAddr(3), a.base, "bob", "bob@example.test", ""); got.status != http.StatusOK {
		t.Fatalf("another client after the spray: %+v, want 200", got)
	}

	// Not exactly one mailbox: 400, never 502, nothing sent.
	before := len(mail.Messages())
	for _, addr := range []string{"not-an-address", "a@b.test, evil@x.test", "undisclosed-recipients:;", "friends: a@b.test;",
		"friends: a@b.test, evil@x.test;", "Alice <a@b.test>", "<a@b.test>", "a@b.test (evil@x.test)",
		"jane.doe@[127.0.0.1]", "jane.doe@127.0.0.1"} {
		got := askConfirmation(t, fromAddr(4), a.base, "alice", addr, "")
		if got.status != http.StatusBadRequest || got.code != "bad_request" || !strings.Contains(got.body, `"requestId"`) {
			t.Fatalf("address %q: %+v, want 400 bad_request in the shared error body", addr, got)
		}
	}
	// The site named in the message is this server's own (its issuer) or an allowed audience only.
	if got := askConfirmation(t, fromAddr(4), a.base, "alice", "carol@example.test", "Your bank: call +1 555 0100"); got.status != http.StatusForbidden || got.code != "audience_not_allowed" {
		t.Fatalf("aud of the caller's choosing: %+v, want 403 audience_not_allowed", got)
	}
	if got := askConfirmation(t, fromAddr(4), a.base, "alice\u202e", "carol@example.test", ""); got.status != http.StatusBadRequest {
		t.Fatalf("user with a bidi override: %+v, want 400", got)
	}
	if got := askConfirmation(t, fromAddr(4), a.base, strings.Repeat("x", 65), "carol@example.test", ""); got.status != http.StatusBadRequest {
		t.Fatalf("user of 65 characters: %+v, want 400", got)
	}
	if after := len(mail.Messages()); after != before {
		t.Fatalf("refused requests sent %d messages", after-before)
	}

	// The caller's text is in the body (bounded) and never in the subject.
	if got := askConfirmation(t, fromAddr(5), a.base, "Claim your prize", "dave@example.test", "triad"); got.status != http.StatusOK {
		t.Fatalf("aud = the server's own site: %+v, want 200", got)
	}
	msgs := mail.Messages()
	msg, err := netmail.ReadMessage(strings.NewReader(msgs[len(msgs)-1].Data))
	if err != nil {
		t.Fatal(err)
	}
	if subj := msg.Header.Get("Subject"); subj != "Login confirmation" {
		t.Fatalf("subject %q, want the fixed Login confirmation", subj)
	}
}
