package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR prefixes
// ("10.0.0.0/8, 127.0.0.1") of the reverse proxies whose X-Forwarded-For the server believes.
// Empty means none. A malformed entry is an error: the start must stop rather than trust the wrong
// peers or none.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR prefix such as 10.0.0.0/8", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// WideProxies are the entries of trusted wider than a /24 (IPv4) or a /64 (IPv6): ranges that hold
// more than the reverse proxies of one site. Every address in a trusted range may name any client
// in X-Forwarded-For, so a private range such as 10.0.0.0/8 lets any host of that network forge
// its address past the per-address limits; the server warns about each at start.
func WideProxies(trusted []netip.Prefix) []netip.Prefix {
	var wide []netip.Prefix
	for _, p := range trusted {
		bits, v4 := p.Bits(), p.Addr().Is4()
		if p.Addr().Is4In6() { // ::ffff:10.0.0.0/104 is 10.0.0.0/8
			bits, v4 = bits-96, true
		}
		if v4 && bits < 24 || !v4 && bits < 64 {
			wide = append(wide, p)
		}
	}
	return wide
}

// ClientAddr sets http.Request.RemoteAddr to the client's address when the connection comes from
// one of the trusted reverse proxies: the right-most X-Forwarded-For entry that is not itself a
// trusted proxy (entries further left were written by whoever sent the request and prove nothing).
// Every later layer that reads RemoteAddr (the access log, the login throttle's per-address
// counts) then sees the client, not the proxy. Without trusted proxies it is the identity: a
// client can write any X-Forwarded-For it likes.
func ClientAddr(trusted []netip.Prefix) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if len(trusted) == 0 {
			return next
		}
		isTrusted := func(a netip.Addr) bool {
			a = a.Unmap()
			for _, p := range trusted {
				if p.Contains(a) {
					return true
				}
			}
			return false
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if client, ok := forwardedClient(r, isTrusted); ok {
				r.RemoteAddr = net.JoinHostPort(client.String(), "0")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Trusts reports whether remoteAddr (http.Request.RemoteAddr, host:port) is one of the trusted
// proxies.
func Trusts(trusted []netip.Prefix, remoteAddr string) bool {
	peer, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	a := peer.Addr().Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedClient walks X-Forwarded-For from the right while the hop that added the entry is
// trusted, and returns the first address no trusted proxy vouches for beyond.
func forwardedClient(r *http.Request, trusted func(netip.Addr) bool) (netip.Addr, bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !trusted(peer.Addr()) {
		return netip.Addr{}, false
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	var client netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break // garbage: keep the last address a trusted hop gave
		}
		client = a.Unmap()
		if !trusted(client) {
			break
		}
	}
	return client, client.IsValid()
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a port or IPv6 brackets.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a, true
	}
	return netip.Addr{}, false
}

// StrictHandler is the shape of every generated strict server's handler func
// (ordersapi.StrictHandlerFunc, brandsapi.StrictHandlerFunc, ...).
type StrictHandler interface {
	~func(ctx context.Context, w http.ResponseWriter, r *http.Request, request any) (any, error)
}

type clientAddrKey struct{}

// ClientAddrFor returns a generated strict server's middleware that hands the client address
// (http.Request.RemoteAddr: the connection's, or the one a trusted proxy named, as ClientAddr set
// it; never a header the client wrote itself) to the operations named, for the limits counted per
// address (failed logins, sign-ups); they read it with ClientAddrOf. Only those operations get
// it, so no other request pays for the context value. The ids are spelt as the generated code
// spells them (RegisterOrdersUser); one that names no operation of spec is an error, since a typo
// would otherwise hand no operation its address and count every client as one.
func ClientAddrFor[F StrictHandler](spec *openapi3.T, operationIDs ...string) (func(f F, operationID string) F, error) {
	if err := KnownOperations(spec, operationIDs...); err != nil {
		return nil, err
	}
	return ClientAddrOps[F](operationIDs), nil
}

// ClientAddrOps is ClientAddrFor over operation ids already checked against the spec
// (KnownOperations).
func ClientAddrOps[F StrictHandler](operationIDs []string) func(f F, operationID string) F {
	return func(f F, operationID string) F {
		if !slices.Contains(operationIDs, operationID) {
			return f
		}
		return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
			return f(WithClientAddr(ctx, r), w, r, req)
		}
	}
}

// WithClientAddr hands r's client address to ctx (ClientAddrOf), for an operation served outside
// a generated strict server (ClientAddrFor's, by hand) that counts something per address.
func WithClientAddr(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, r.RemoteAddr)
}

// ClientAddrOf is the client address ClientAddrFor handed to the operation, or "".
func ClientAddrOf(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}
