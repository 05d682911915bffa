package avatar

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ClientOptions configures NewHTTPClient.
type ClientOptions struct {
	// Timeout bounds the whole exchange (dial, TLS, headers, body); default 10s.
	Timeout time.Duration
	// MaxBytes caps a response body; reading past it fails with ErrTooLarge. Default 4 MiB.
	MaxBytes int64
	// MaxRedirects bounds followed redirects; each hop is dialed through the same address guard and
	// must stay http(s). Default 3; a negative value refuses all redirects.
	MaxRedirects int
	// AllowPrivate turns the address guard off. Only tests set it: httptest servers listen on loopback.
	AllowPrivate bool

	// permit, set by tests only, lets the guard pass the listed loopback servers while it keeps
	// refusing every other non-public address (to test redirects into private networks).
	permit func(netip.AddrPort) bool
}

// Defaults of the outbound client and the proxy.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBytes     = 4 << 20
	DefaultMaxRedirects = 3
	// DefaultMaxPixels bounds width*height of a picture before it is decoded. Defends against
	// decompression bombs: a few KB of PNG can declare a gigapixel canvas that would need gigabytes.
	DefaultMaxPixels = 3000 * 3000
)

// NewHTTPClient is the one factory for outbound picture requests. Its dialer refuses non-public
// addresses in Control, which runs on the address actually being dialed, after DNS resolution: a
// host that resolves to a public address at check time and to 127.0.0.1 at dial time (DNS
// rebinding) is still refused. Environment proxies are ignored, since a proxy would do the dial
// on our behalf and bypass the guard.
func NewHTTPClient(o ClientOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	dialer := &net.Dialer{Timeout: o.Timeout}
	if !o.AllowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			return guardDial(address, o.permit)
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
		Transport: &capTransport{base: tr, max: o.MaxBytes},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects < 0 || len(via) > maxRedirects {
				return fmt.Errorf("avatar: too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return ErrBadURL
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

// PublicAddr reports whether a is a public unicast address the proxy may dial.
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
