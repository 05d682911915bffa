package provider

import (
	"net/url"
	"strings"
)

// NewRedirectValidator returns an AllowedRedirect function accepting only targets on the service's
// own host (from serviceURL) or on one of hosts, plus same-site relative paths. Everything else,
// including scheme-relative "//evil" and backslash tricks, is refused: open-redirect safe by default.
func NewRedirectValidator(serviceURL string, hosts []string) func(string) bool {
	allowed := map[string]bool{}
	if u, err := url.Parse(serviceURL); err == nil && u.Host != "" {
		allowed[strings.ToLower(u.Host)] = true
		allowed[strings.ToLower(u.Hostname())] = true
	}
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			allowed[h] = true
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
		return allowed[strings.ToLower(u.Host)] || allowed[strings.ToLower(u.Hostname())]
	}
}
