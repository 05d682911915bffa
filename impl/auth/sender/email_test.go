package sender_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/triadhq/triad/impl/auth/sender"
)

// mailbox is an in-process SMTP server (go-smtp) recording what it receives.
type mailbox struct {
	mu       sync.Mutex
	msgs     []received
	user     string
	password string
}

type received struct {
	from, to, data string
	tls, authed    bool
}

type session struct {
	mb     *mailbox
	conn   *smtp.Conn
	cur    received
	authed bool
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.mb.user || pass != s.mb.password {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.mb.user != "" && !s.authed {
		return &smtp.SMTPError{Code: 530, Message: "auth required"}
	}
	s.cur.from = from
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.cur.to = to; return nil }
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	_, s.cur.tls = s.conn.TLSConnectionState()
	s.cur.authed = s.authed
	s.mb.mu.Lock()
	s.mb.msgs = append(s.mb.msgs, s.cur)
	s.mb.mu.Unlock()
	return nil
}
func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startSMTP runs a real SMTP server on an ephemeral port; with auth set it requires PLAIN auth,
// which go-smtp only allows after STARTTLS.
func startSMTP(t *testing.T, user, pass string) (*mailbox, string, int) {
	t.Helper()
	mb := &mailbox{user: user, password: pass}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{mb: mb, conn: c}, nil }))
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	srv.ReadTimeout, srv.WriteTimeout = 5*time.Second, 5*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return mb, host, p
}

func TestEmail_StartTLSWithAuthDelivers(t *testing.T) {
	t.Parallel()
	mb, host, port := startSMTP(t, "mailer", "s3cret")
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: port, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		StartTLS: true, InsecureSkipVerify: true, From: "Triad <noreply@example.com>", Subject: "Your login — code"}, nil)
	if err := e.Send("alice@example.com", "<p>token: abc.def.ghi</p>"); err != nil {
		t.Fatal(err)
	}
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if len(mb.msgs) != 1 {
		t.Fatalf("got %d messages", len(mb.msgs))
	}
	m := mb.msgs[0]
	if !m.tls || !m.authed || m.from != "noreply@example.com" || m.to != "alice@example.com" {
		t.Fatalf("envelope %+v", m)
	}
	for _, want := range []string{"Content-Type: text/html; charset=UTF-8", "Subject: =?UTF-8?q?", "token: abc.def.ghi", "To: <alice@example.com>"} {
		if !strings.Contains(m.data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.data)
		}
	}
}

func TestEmail_StartTLSVerifiesCertificate(t *testing.T) {
	t.Parallel()
	mb, host, port := startSMTP(t, "mailer", "s3cret")
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: port, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		StartTLS: true, From: "noreply@example.com"}, nil)
	if err := e.Send("alice@example.com", "hi"); err == nil {
		t.Fatal("self-signed certificate accepted without InsecureSkipVerify")
	}
	if len(mb.msgs) != 0 {
		t.Fatal("message delivered")
	}
}

func TestEmail_WrongPasswordFails(t *testing.T) {
	t.Parallel()
	_, host, port := startSMTP(t, "mailer", "s3cret")
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: port, SMTPUserName: "mailer", SMTPPassword: "nope",
		StartTLS: true, InsecureSkipVerify: true, From: "noreply@example.com"}, nil)
	if err := e.Send("alice@example.com", "hi"); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestEmail_PlainWithoutAuthAndHeaderInjection(t *testing.T) {
	t.Parallel()
	mb, host, port := startSMTP(t, "", "")
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: port, From: "noreply@example.com", ContentType: "text/plain", Charset: "ISO-8859-1"}, nil)
	if err := e.Send("bob@example.com", "plain body"); err != nil {
		t.Fatal(err)
	}
	if err := e.Send("bob@example.com\r\nBcc: eve@example.com", "x"); !errors.Is(err, sender.ErrHeaderInjection) {
		t.Fatalf("injection: %v", err)
	}
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if len(mb.msgs) != 1 || mb.msgs[0].tls || !strings.Contains(mb.msgs[0].data, "Content-Type: text/plain; charset=ISO-8859-1") {
		t.Fatalf("messages %+v", mb.msgs)
	}
}

func TestEmail_ImplicitTLS(t *testing.T) {
	t.Parallel()
	mb := &mailbox{user: "mailer", password: "s3cret"}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{mb: mb, conn: c}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 5*time.Second, 5*time.Second
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	e := sender.NewEmail(sender.EmailParams{Host: host, Port: p, SMTPUserName: "mailer", SMTPPassword: "s3cret",
		TLS: true, InsecureSkipVerify: true, From: "noreply@example.com"}, nil)
	if err := e.Send("carol@example.com", "hello"); err != nil {
		t.Fatal(err)
	}
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if len(mb.msgs) != 1 || !mb.msgs[0].tls || !mb.msgs[0].authed {
		t.Fatalf("messages %+v", mb.msgs)
	}
	if err := sender.NewEmail(sender.EmailParams{Host: host, Port: p, StartTLS: true, TLS: true, From: "noreply@example.com"}, nil).Send("c@example.com", "x"); err == nil {
		t.Fatal("StartTLS and TLS together accepted")
	}
}
