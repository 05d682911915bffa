// Package smtptest runs a real SMTP server (emersion/go-smtp) on a loopback port for tests of code
// that sends mail, so the sender is exercised over the real protocol (STARTTLS, implicit TLS, PLAIN
// authentication) rather than through a fake of its own interface.
package smtptest

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
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options shape the server.
type Options struct {
	// User and Password, when User is set, make the server require PLAIN authentication before
	// MAIL (go-smtp offers it only on a TLS connection, so the client must STARTTLS or use TLS).
	User, Password string
	// ImplicitTLS serves TLS from the first byte (SMTPS) instead of offering STARTTLS.
	ImplicitTLS bool
}

// Message is one delivered message with its envelope and how it came.
type Message struct {
	From, To, Data string
	TLS, Authed    bool // the connection was encrypted / the client authenticated
}

// Server is a running SMTP server; it stops when the test ends. Its certificate is self-signed
// for 127.0.0.1, so clients must skip verification (or test that they refuse it).
type Server struct {
	Host string
	Port int

	opts Options
	mu   sync.Mutex
	msgs []Message
}

// Start runs a server on an ephemeral loopback port until t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{srv: s, conn: c}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 5*time.Second, 5*time.Second
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	var ln net.Listener
	var err error
	if opts.ImplicitTLS {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", tlsConfig)
	} else {
		srv.TLSConfig = tlsConfig
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

// Messages returns a copy of what was delivered so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type session struct {
	srv    *Server
	conn   *smtp.Conn
	cur    Message
	authed bool
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.srv.opts.User || pass != s.srv.opts.Password {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.opts.User != "" && !s.authed {
		return &smtp.SMTPError{Code: 530, Message: "auth required"}
	}
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error { s.cur.To = to; return nil }

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = string(b)
	_, s.cur.TLS = s.conn.TLSConnectionState()
	s.cur.Authed = s.authed
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = Message{} }
func (s *session) Logout() error { return nil }

// selfSigned makes a throwaway ECDSA certificate for 127.0.0.1, valid for an hour either side.
func selfSigned(t testing.TB) tls.Certificate {
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
