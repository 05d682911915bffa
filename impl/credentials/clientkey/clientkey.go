// Package clientkey names the client a per-address limit counts under, so every limit (failed
// logins, sign-ups, confirmation mails) puts one client under the same key.
package clientkey

import "net/netip"

// Net is the client network of remoteAddr (http.Request.RemoteAddr): the address itself, an
// IPv4-mapped one unmapped, an IPv6 one by its /64 (one host commonly holds a whole /64, so a
// per-address limit by the full address would be one per address it cares to use). A remoteAddr
// that is not host:port (a unix socket, a test's made-up address) is its own key.
func Net(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}
