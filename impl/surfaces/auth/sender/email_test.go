package sender_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/sender"
	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
)

func TestEmail_StartTLSWithAuthDelivers(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{User: "mailer", Password: "s3cret"})
	e := sender.NewEmail(sender.EmailParams{Host: srv.Host, Port: srv.Port, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		StartTLS: true, InsecureSkipVerify: true, From: "Triad <noreply@example.com>", Subject: "Your login — code"}, nil)
	if err := e.Send("alice@example.com", "<p>token: abc.def.ghi</p>"); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d messages", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || !m.Authed || m.From != "noreply@example.com" || m.To != "alice@example.com" {
		t.Fatalf("envelope %+v", m)
	}
	for _, want := range []string{"Content-Type: text/html; charset=UTF-8", "Subject: =?UTF-8?q?", "token: abc.def.ghi", "To: <alice@example.com>"} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Data)
		}
	}
}

func TestEmail_StartTLSVerifiesCertificate(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{User: "mailer", Password: "s3cret"})
	e := sender.NewEmail(sender.EmailParams{Host: srv.Host, Port: srv.Port, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		StartTLS: true, From: "noreply@example.com"}, nil)
	if err := e.Send("alice@example.com", "hi"); err == nil {
		t.Fatal("self-signed certificate accepted without InsecureSkipVerify")
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("message delivered")
	}
}

func TestEmail_WrongPasswordFails(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{User: "mailer", Password: "s3cret"})
	e := sender.NewEmail(sender.EmailParams{Host: srv.Host, Port: srv.Port, SMTPUserName: "mailer", SMTPPassword: "nope",
		StartTLS: true, InsecureSkipVerify: true, From: "noreply@example.com"}, nil)
	if err := e.Send("alice@example.com", "hi"); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestEmail_PlainWithoutAuthAndHeaderInjection(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	e := sender.NewEmail(sender.EmailParams{Host: srv.Host, Port: srv.Port, From: "noreply@example.com", ContentType: "text/plain", Charset: "ISO-8859-1"}, nil)
	if err := e.Send("bob@example.com", "plain body"); err != nil {
		t.Fatal(err)
	}
	if err := e.Send("bob@example.com\r\nBcc: eve@example.com", "x"); !errors.Is(err, sender.ErrHeaderInjection) {
		t.Fatalf("injection: %v", err)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].TLS || !strings.Contains(msgs[0].Data, "Content-Type: text/plain; charset=ISO-8859-1") {
		t.Fatalf("messages %+v", msgs)
	}
}

func TestEmail_ImplicitTLS(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{User: "mailer", Password: "s3cret", ImplicitTLS: true})
	host, p := srv.Host, srv.Port
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: p, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		TLS: true, InsecureSkipVerify: true, From: "noreply@example.com"}, nil)
	if err := e.Send("carol@example.com", "hello"); err != nil {
		t.Fatal(err)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || !msgs[0].TLS || !msgs[0].Authed {
		t.Fatalf("messages %+v", msgs)
	}
	if err := sender.NewEmail(sender.EmailParams{Host: host, Port: p, StartTLS: true, TLS: true, From: "noreply@example.com"}, nil).Send("c@example.com", "x"); err == nil {
		t.Fatal("StartTLS and TLS together accepted")
	}
}

// TestEmail_SeedLogger: the sender takes the seed's Logf logger (logger.Std, logger.Func) where it
// took a *slog.Logger, and its log lines reach that function.
func TestEmail_SeedLogger(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	var got []string
	for _, l := range []logger.L{logger.Std, logger.Func(func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) })} {
		e := sender.NewEmail(sender.EmailParams{Host: srv.Host, Port: srv.Port, From: "noreply@example.com"}, l)
		if err := e.Send("bob@example.com", "hi"); err != nil {
			t.Fatal(err)
		}
		e.L.Warn("smtp quit", "err", "test")
	}
	if len(got) != 1 || got[0] != `level=WARN msg="smtp quit" err=test` {
		t.Fatalf("the Func logger got %q", got)
	}
}

// TestEmail_CheckAddressOneMailbox: a bare mailbox passes; lists, display names and domains that
// are IP addresses (literal or bare) do not.
func TestEmail_CheckAddressOneMailbox(t *testing.T) {
	var e sender.Email
	if err := e.CheckAddress("jane.doe@gmail.com"); err != nil {
		t.Errorf("jane.doe@gmail.com: %v", err)
	}
	for _, a := range []string{"jane.doe@[127.0.0.1]", "jane@127.0.0.1", "jane@[IPv6:::1]", "a@b.test, c@d.test", "Jane <jane@x.test>"} {
		if err := e.CheckAddress(a); !errors.Is(err, sender.ErrNotOneMailbox) {
			t.Errorf("%q: %v, want ErrNotOneMailbox", a, err)
		}
	}
}
