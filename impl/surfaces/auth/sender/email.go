// Package sender delivers the verified provider's confirmation messages by e-mail over SMTP
// (github.com/emersion/go-smtp), with STARTTLS or implicit TLS and PLAIN authentication.
package sender

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/triadhq/triad/impl/surfaces/auth/logger"
)

// EmailParams configure the e-mail sender.
type EmailParams struct {
	// Host and Port of the SMTP server; Port defaults to 25.
	Host string
	Port int
	// SMTPUserName and SMTPPassword enable PLAIN authentication when the user name is set.
	SMTPUserName string
	SMTPPassword string
	// StartTLS upgrades the connection with STARTTLS before authenticating (port 587 style).
	StartTLS bool
	// TLS connects with implicit TLS (port 465 style); it excludes StartTLS.
	TLS bool
	// InsecureSkipVerify accepts any server certificate. For tests and self-signed relays only.
	InsecureSkipVerify bool
	// From is the sender address, e.g. "Site <noreply@example.com>". Required.
	From string
	// Subject of the messages; default "Login confirmation".
	Subject string
	// ContentType of the body; default "text/html".
	ContentType string
	// Charset of the body and subject; default "UTF-8".
	Charset string
	// TimeOut bounds a whole delivery; default 30 s.
	TimeOut time.Duration
}

// Email sends messages through an SMTP server. It implements provider.Sender.
type Email struct {
	EmailParams
	L *slog.Logger
}

// NewEmail fills the defaults of p. l logs SMTP trouble: any value with Logf (logger.Std, a
// logger.Func, a type of your own, logger.FromSlog(s)); nil passes warnings and errors to the
// standard log (logger.Errors), logger.NoOp logs nothing.
func NewEmail(p EmailParams, l logger.L) *Email {
	if p.Port == 0 {
		p.Port = 25
	}
	if p.Subject == "" {
		p.Subject = "Login confirmation"
	}
	if p.ContentType == "" {
		p.ContentType = "text/html"
	}
	if p.Charset == "" {
		p.Charset = "UTF-8"
	}
	if p.TimeOut <= 0 {
		p.TimeOut = 30 * time.Second
	}
	return &Email{EmailParams: p, L: logger.Of(l)}
}

// ErrHeaderInjection refuses addresses or subjects with line breaks, which would let a caller add
// headers or recipients to the message.
var ErrHeaderInjection = errors.New("sender: line break in a header value")

// ErrNotOneMailbox refuses an address that is not exactly one bare mailbox.
var ErrNotOneMailbox = errors.New("sender: the address is not exactly one mailbox")

// CheckAddress accepts exactly one bare mailbox such as alice@example.com: not a list, a group, a
// display name, angle brackets or a comment, nor anything net/mail cannot parse. A caller of the
// verified login names the recipient, so anything that could reach a second mailbox is refused
// before a message exists. A domain that is an IP address (the literal jane@[127.0.0.1], or
// jane@127.0.0.1) is refused too: it names a mail host rather than a mailbox's domain, gives every
// address of a host another spelling of one mailbox (a fresh per-recipient allowance each), and
// points the relay at hosts of the caller's choosing. It makes Email a provider.AddressChecker.
func (e *Email) CheckAddress(address string) error {
	a, err := mail.ParseAddress(address)
	if err != nil || a.Name != "" || a.Address != address {
		return ErrNotOneMailbox
	}
	domain := address[strings.LastIndexByte(address, '@')+1:]
	if _, err := netip.ParseAddr(strings.Trim(domain, "[]")); err == nil || strings.HasPrefix(domain, "[") {
		return ErrNotOneMailbox
	}
	return nil
}

// Send delivers text to the address.
func (e *Email) Send(address, text string) error {
	if e.StartTLS && e.TLS {
		return errors.New("sender: StartTLS and TLS are exclusive")
	}
	for _, v := range []string{address, e.From, e.Subject} {
		if strings.ContainsAny(v, "\r\n") {
			return ErrHeaderInjection
		}
	}
	if err := e.CheckAddress(address); err != nil {
		return err
	}
	to := &mail.Address{Address: address}
	from, err := mail.ParseAddress(e.From)
	if err != nil {
		return fmt.Errorf("sender: from: %w", err)
	}
	msg, err := e.message(from, to, text)
	if err != nil {
		return err
	}
	c, err := e.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if e.SMTPUserName != "" {
		if err := c.Auth(sasl.NewPlainClient("", e.SMTPUserName, e.SMTPPassword)); err != nil {
			return fmt.Errorf("sender: auth: %w", err)
		}
	}
	if err := c.SendMail(from.Address, []string{to.Address}, bytes.NewReader(msg)); err != nil {
		return fmt.Errorf("sender: send: %w", err)
	}
	if err := c.Quit(); err != nil {
		e.L.Warn("smtp quit", "err", err)
	}
	return nil
}

func (e *Email) dial() (*smtp.Client, error) {
	addr := net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
	tlsCfg := &tls.Config{ServerName: e.Host, InsecureSkipVerify: e.InsecureSkipVerify, MinVersion: tls.VersionTLS12} //nolint:gosec // opt-in, documented
	d := net.Dialer{Timeout: e.TimeOut}
	var conn net.Conn
	var err error
	if e.TLS {
		conn, err = tls.DialWithDialer(&d, "tcp", addr, tlsCfg)
	} else {
		conn, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("sender: dial %s: %w", addr, err)
	}
	// One deadline for the whole conversation: a stuck server must not hold a login request.
	_ = conn.SetDeadline(time.Now().Add(e.TimeOut))
	if !e.StartTLS {
		return smtp.NewClient(conn), nil
	}
	// STARTTLS is required, not opportunistic: a server that does not offer it fails the send
	// rather than receiving the credentials in clear.
	c, err := smtp.NewClientStartTLS(conn, tlsCfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("sender: starttls: %w", err)
	}
	return c, nil
}

func (e *Email) message(from, to *mail.Address, text string) ([]byte, error) {
	var b bytes.Buffer
	var id [12]byte
	_, _ = rand.Read(id[:])
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	hdr := [][2]string{
		{"From", from.String()},
		{"To", to.String()},
		{"Subject", mime.QEncoding.Encode(e.Charset, e.Subject)},
		{"Date", time.Now().Format(time.RFC1123Z)},
		{"Message-ID", "<" + hex.EncodeToString(id[:]) + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", mime.FormatMediaType(e.ContentType, map[string]string{"charset": e.Charset})},
		{"Content-Transfer-Encoding", "quoted-printable"},
	}
	for _, h := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(text)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
