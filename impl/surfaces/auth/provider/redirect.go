package provider

import (
	"net/url"
	"strings"
)

// origin is a scheme, lower-cased host name and explicit port: the unit a browser isolates, so the
// unit a redirect target is allowed on. An empty scheme matches http and https.
type origin struct{ scheme, host, port string }

// defaultPort is the port a URL without one uses.
func defaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}

// parseAllowed reads an allowed-hosts entry: a full origin "scheme://host[:port]" (exactly that
// origin), "host:port" (that port, http or https) or a bare "host" (http on 80 or https on 443,
// the default ports only). Anything it cannot read is dropped, never widened.
func parseAllowed(s string) (origin, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return origin{}, false
	}
	if !strings.Contains(s, "://") {
		u, err := url.Parse("//" + s)
		if err != nil || u.Host != s || u.Hostname() == "" {
			return origin{}, false
		}
		return origin{host: u.Hostname(), port: u.Port()}, true
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" {
		return origin{}, false
	}
	p := u.Port()
	if p == "" {
		p = defaultPort(u.Scheme)
	}
	return origin{scheme: u.Scheme, host: u.Hostname(), port: p}, true
}

// matches reports whether the target (scheme, host, port with defaults filled in) is on o.
func (o origin) matches(scheme, host, port string) bool {
	if o.host != host {
		return false
	}
	if o.scheme != "" {
		return o.scheme == scheme && o.port == port
	}
	if o.port == "" {
		return port == defaultPort(scheme)
	}
	return o.port == port
}

// NewRedirectValidator returns an AllowedRedirect function accepting only same-site relative paths
// and absolute targets on the exact origin (scheme, host and port) of serviceURL or on one of
// hosts. An entry of hosts is a full origin ("https://partner.example.org:8443"), a host and port
// ("partner.example.org:8443": that port over http or https) or a bare host ("partner.example.org":
// that host on the default ports, http on 80 or https on 443). Everything else, including
// scheme-relative "//evil", other ports of an allowed host and backslash tricks, is refused:
// open-redirect safe by default.
func NewRedirectValidator(serviceURL string, hosts []string) func(string) bool {
	var allowed []origin
	if u, err := url.Parse(serviceURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
		p := u.Port()
		if p == "" {
			p = defaultPort(u.Scheme)
		}
		allowed = append(allowed, origin{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: p})
	}
	for _, h := range hosts {
		if o, ok := parseAllowed(h); ok {
			allowed = append(allowed, o)
		}
	}
	return func(from string) bool {
		// Browsers treat '\' like '/', and control characters are stripped before parsing; either
		// can turn an innocent-looking target into another host.
		if from == "" || strings.ContainsAny(from, "\\\t\r\n") || len(from) > 2048 {
			return false
		}
		u, err := url.Parse(from)
		if err != nil || u.User != nil {
			return false
		}
		if u.Scheme == "" && u.Host == "" {
			// A relative target stays on this site only if it is a plain absolute path.
			return strings.HasPrefix(from, "/") && !strings.HasPrefix(from, "//")
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return false
		}
		host, port := strings.ToLower(u.Hostname()), u.Port()
		if port == "" {
			port = defaultPort(u.Scheme)
		}
		for _, o := range allowed {
			if o.matches(u.Scheme, host, port) {
				return true
			}
		}
		return false
	}
}
