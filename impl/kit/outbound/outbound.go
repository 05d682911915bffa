// Package outbound is the one factory of HTTP clients that call out of the server (OAuth providers,
// the messenger API, key sets, avatar pictures): each has a timeout, a response body cap, a bounded
// redirect policy and a dial guard that refuses non-public addresses, so no URL an operator or a
// user supplies can make the server reach inside its own network or hang on an endless body. Each
// call made under a traced request is a span of its trace (tracing.Transport).
package outbound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/kit/tracing"
)

// Errors of the guarded client (wrapped in *url.Error by http.Client).
var (
	// ErrForbiddenAddress means the host resolved to a private, loopback, link-local or otherwise
	// non-public address.
	ErrForbiddenAddress = errors.New("outbound: address not allowed")
	// ErrTooLarge means the response body exceeds the client's MaxBytes.
	ErrTooLarge = errors.New("outbound: response too large")
	// ErrRedirect means a redirect was refused: past MaxRedirects.
	ErrRedirect = errors.New("outbound: redirect refused")
	// ErrRedirectScheme means a redirect pointed to a scheme other than http(s).
	ErrRedirectScheme = errors.New("outbound: redirect to a scheme other than http or https")
)

// Options configures New.
type Options struct {
	// Timeout bounds the whole exchange (dial, TLS, headers, body); default 10s.
	Timeout time.Duration
	// MaxBytes caps a response body; reading past it fails with ErrTooLarge. Default 4 MiB.
	MaxBytes int64
	// MaxRedirects bounds followed redirects; each hop is dialed through the same address guard and
	// must stay http(s). 0 refuses every redirect: API calls (tokens, user info, keys, messenger)
	// have no protocol reason to follow one. Pictures use DefaultMaxRedirects.
	MaxRedirects int
	// AllowPrivate turns the address guard off. Tests set it (httptest servers listen on loopback),
	// and so does the dev login provider, whose server is this process's own loopback listener.
	AllowPrivate bool
	// Permit, set by tests only, lets the guard pass the listed servers while it keeps refusing
	// every other non-public address (to test redirects into private networks).
	Permit func(netip.AddrPort) bool
}

// Defaults of New.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBytes     = 4 << 20
	DefaultMaxRedirects = 3
)

// New returns a guarded client. Its dialer refuses non-public addresses in Control, which runs on
// the address actually being dialed, after DNS resolution: a host that resolves to a public address
// at check time and to 127.0.0.1 at dial time (DNS rebinding) is still refused. Environment proxies
// are ignored, since a proxy would do the dial on our behalf and bypass the guard.
func New(o Options) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	dialer := &net.Dialer{Timeout: o.Timeout}
	if !o.AllowPrivate {
		permit := o.Permit
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			return guardDial(address, permit)
		}
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    o.Timeout,
		ResponseHeaderTimeout:  o.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           10,
		IdleConnTimeout:        30 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	maxRedirects := o.MaxRedirects
	return &http.Client{
		Timeout:   o.Timeout,
		Transport: &capTransport{base: tracing.Transport(tr), max: o.MaxBytes},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("%w: more than %d", ErrRedirect, maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return ErrRedirectScheme
			}
			return nil
		},
	}
}

// guardDial refuses to connect to anything but a public unicast address (or one permit allows).
func guardDial(address string, permit func(netip.AddrPort) bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if permit != nil && permit(ap) {
		return nil
	}
	if !PublicAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// nonPublic lists ranges that the netip predicates do not cover but that must not be reachable
// from a URL a user controls: "this network", carrier-grade NAT, IETF protocol assignments,
// benchmarking, reserved/broadcast, and IPv6 translation prefixes that embed an IPv4 address
// (NAT64, 6to4) which could point back inside.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// PublicAddr reports whether a is a public unicast address a guarded client may dial.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// capTransport fails a response body read past max bytes, so a hostile server cannot stream an
// endless body into memory.
type capTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		_ = resp.Body.Close()
		return nil, ErrTooLarge
	}
	resp.Body = &capReader{rc: resp.Body, left: t.max}
	return resp, nil
}

// capReader returns ErrTooLarge once more than left bytes have been read.
type capReader struct {
	rc   io.ReadCloser
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

func (c *capReader) Close() error { return c.rc.Close() }
