// Package cors lets browser pages on other origins call the server (a SPA on its own dev server or
// domain): preflight answers and the Access-Control-* headers of actual responses, for an explicit
// list of origins. Nothing is allowed unless listed (default deny).
package cors

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DevOrigins are the local dev-server origins allowed in dev mode (Vite, Create React App / Next,
// Angular, Vue CLI / Expo), on localhost and 127.0.0.1.
func DevOrigins() []string {
	var out []string
	for _, host := range []string{"localhost", "127.0.0.1"} {
		for _, port := range []string{"3000", "4200", "5173", "8081"} {
			out = append(out, "http://"+host+":"+port)
		}
	}
	return out
}

// maxAge lets a browser reuse a preflight for 10 minutes.
const maxAge = "600"

// Policy is the set of origins allowed to call the server from a browser.
type Policy struct {
	origins map[string]bool
	// any is "*": every origin, without credentials (browsers refuse credentials with a wildcard,
	// and echoing any origin with credentials would let every site act as the logged-in user).
	any bool
	// methods, allow and expose are the Access-Control-* lists (Policy.With, from the specs).
	methods, allow, expose string
}

// Parse reads a comma-separated list of exact origins (`https://app.example.com,http://localhost:5173`).
// Empty allows no cross-origin access; `*` allows every origin without credentials and must stand
// alone. extra origins (the dev-server ones in dev mode) are added to the list. A malformed origin is
// an error, so a typo stops the start instead of silently blocking a frontend.
func Parse(list string, extra ...string) (Policy, error) {
	p := Policy{origins: map[string]bool{}}
	for _, raw := range strings.Split(list, ",") {
		o := strings.TrimSpace(raw)
		switch {
		case o == "":
			continue
		case o == "*":
			p.any = true
			continue
		}
		if err := checkOrigin(o); err != nil {
			return Policy{}, err
		}
		p.origins[o] = true
	}
	if p.any && len(p.origins) > 0 {
		return Policy{}, fmt.Errorf("cors origins: * allows every origin and cannot be combined with a list")
	}
	if !p.any {
		for _, o := range extra {
			p.origins[o] = true
		}
	}
	return p, nil
}

// checkOrigin accepts scheme://host[:port] exactly as a browser sends it in the Origin header.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.ToLower(o) != o {
		return fmt.Errorf("cors origins: %q is not an origin (scheme://host[:port], lower case, no path)", o)
	}
	return nil
}

// With returns p answering with h: the methods and request headers a preflight allows, and the
// response headers a page may read.
func (p Policy) With(h Headers) Policy {
	p.methods = strings.Join(h.Methods, ", ")
	p.allow = strings.Join(h.Allow, ", ")
	p.expose = strings.Join(h.Expose, ", ")
	return p
}

// Enabled reports whether any cross-origin access is allowed.
func (p Policy) Enabled() bool { return p.any || len(p.origins) > 0 }

// allowed returns the Access-Control-Allow-Origin value for origin and whether credentials may go
// with it; "" refuses.
func (p Policy) allowed(origin string) (string, bool) {
	switch {
	case origin == "":
		return "", false
	case p.origins[origin]:
		return origin, true
	case p.any:
		return "*", false
	}
	return "", false
}

// Middleware answers preflights from allowed origins (204 with the allowed methods and headers)
// and marks the responses of actual requests from them readable. Requests from other origins pass
// through untouched: without the headers the browser keeps the response from the page.
func (p Policy) Middleware(next http.Handler) http.Handler {
	if !p.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		h := w.Header()
		// The answer depends on Origin, so shared caches must key on it.
		h.Add("Vary", "Origin")
		allow, creds := p.allowed(origin)
		if allow == "" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", allow)
		if creds {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", p.methods)
			if p.allow != "" {
				h.Set("Access-Control-Allow-Headers", p.allow)
			}
			h.Set("Access-Control-Max-Age", maxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if p.expose != "" {
			h.Set("Access-Control-Expose-Headers", p.expose)
		}
		next.ServeHTTP(w, r)
	})
}
