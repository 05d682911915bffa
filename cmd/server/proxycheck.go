package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"

	"github.com/triadhq/triad/impl/kit/web"
)

// proxyCheck notices requests that carry X-Forwarded-For from a peer that is not a trusted proxy
// (TRUSTED_PROXIES). Such a peer is either a client writing the header itself (harmless: it is
// ignored) or a reverse proxy the server was not told about, and then every client behind it shares
// the proxy's address: one address's failed-login and registration counts then cover everyone, so
// an operator must hear about it. It warns once per process, at the first such request, and keeps
// the last such peer for /readyz's detail.
type proxyCheck struct {
	trusted []netip.Prefix
	log     *slog.Logger
	warned  atomic.Bool
	peer    atomic.Pointer[string]
}

// middleware runs before web.ClientAddr, while RemoteAddr is still the connection's peer.
func (p *proxyCheck) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["X-Forwarded-For"]; ok && !web.Trusts(p.trusted, r.RemoteAddr) {
			p.seen(r.RemoteAddr)
		}
		next.ServeHTTP(w, r)
	})
}

func (p *proxyCheck) seen(remoteAddr string) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if last := p.peer.Load(); last == nil || *last != host {
		p.peer.Store(&host)
	}
	if p.warned.CompareAndSwap(false, true) {
		p.log.Warn("X-Forwarded-For from a peer that is not a trusted proxy: it is ignored, so if that peer is a reverse proxy every client behind it shares its address for the login and registration limits; set TRUSTED_PROXIES to its address or range",
			"peer", host, "trusted_proxies", len(p.trusted))
	}
}

// detail is /readyz's note, or "" when no such request was seen.
func (p *proxyCheck) detail() string {
	last := p.peer.Load()
	if last == nil {
		return ""
	}
	return "X-Forwarded-For from " + *last + ", which is not a trusted proxy (TRUSTED_PROXIES): ignored"
}
