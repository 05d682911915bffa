package avatar

import "net/netip"

// What the external tests (package avatar_test, which may import the store packages) need of the
// package's inside.

// Prepare is prepare, for the image-check tests.
func (p *Proxy) Prepare(b []byte) ([]byte, error) { return p.prepare(b) }

// ProxyStore is the proxy's store.
func (p *Proxy) ProxyStore() Store { return p.opts.Store }

// WithPermit returns o with its test-only guard exception set.
func WithPermit(o ClientOptions, permit func(netip.AddrPort) bool) ClientOptions {
	o.permit = permit
	return o
}

// IdenticonSize is the identicons' width and height.
const IdenticonSize = identiconSize
