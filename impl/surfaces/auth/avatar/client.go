package avatar

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
)

// ClientOptions configures NewHTTPClient.
type ClientOptions struct {
	// Timeout bounds the whole exchange (dial, TLS, headers, body); default 10s.
	Timeout time.Duration
	// MaxBytes caps a response body; reading past it fails with ErrTooLarge. Default 4 MiB.
	MaxBytes int64
	// MaxRedirects bounds followed redirects; each hop is dialed through the same address guard and
	// must stay http(s). Default 3 (picture hosts redirect to CDNs); a negative value refuses all.
	MaxRedirects int
	// AllowPrivate turns the address guard off. Only tests set it: httptest servers listen on loopback.
	AllowPrivate bool

	// permit, set by tests only, lets the guard pass the listed loopback servers while it keeps
	// refusing every other non-public address (to test redirects into private networks).
	permit func(netip.AddrPort) bool
}

// Defaults of the outbound client and the proxy.
const (
	DefaultTimeout      = outbound.DefaultTimeout
	DefaultMaxBytes     = outbound.DefaultMaxBytes
	DefaultMaxRedirects = outbound.DefaultMaxRedirects
	// DefaultMaxPixels bounds width*height of a picture before it is decoded. Defends against
	// decompression bombs: a few KB of PNG can declare a gigapixel canvas that would need gigabytes.
	DefaultMaxPixels = 3000 * 3000
)

// NewHTTPClient is the guarded client of package outbound (the one factory of outbound clients)
// set up for pictures: redirects are followed (up to MaxRedirects), since picture URLs commonly
// point at a CDN through one.
func NewHTTPClient(o ClientOptions) *http.Client {
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultMaxRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	return outbound.New(outbound.Options{Timeout: o.Timeout, MaxBytes: o.MaxBytes, MaxRedirects: o.MaxRedirects,
		AllowPrivate: o.AllowPrivate, Permit: o.permit})
}

// PublicAddr reports whether a is a public unicast address the proxy may dial.
func PublicAddr(a netip.Addr) bool { return outbound.PublicAddr(a) }

// clientError maps the guarded client's refusals to the package's errors, keeping the cause.
func clientError(err error) error {
	switch {
	case errors.Is(err, outbound.ErrTooLarge):
		return fmt.Errorf("%w (%w)", ErrTooLarge, err)
	case errors.Is(err, outbound.ErrRedirectScheme):
		return fmt.Errorf("%w (%w)", ErrBadURL, err)
	}
	return err
}
