package auth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// CodeUnknownProvider is the error code of a request naming a provider that is not registered.
const CodeUnknownProvider = "unknown_provider"

// Handlers returns the auth handler, to mount at AuthPath ("/auth"), and the avatar handler, to
// mount at AvatarRoutePath ("/avatar"). They work however they are mounted: chi's Mount,
// http.StripPrefix, or a plain http.ServeMux pattern ("/auth/", "/avatar/") that passes the full
// path, from which each handler strips its own configured path.
//
// Auth routes: GET /list, GET /user, GET /status, GET|POST /logout, and per provider
// GET|POST /<p>/login, GET|POST /<p>/callback, GET|POST /<p>/logout.
func (s *Service) Handlers() (authHandler, avatarHandler http.Handler) {
	return mountable(s.router(), s.opts.AuthPath), mountable(web.WithLogger(s.log)(s.avatarH), s.opts.AvatarRoutePath)
}

// router routes the auth handler's paths below its mount point. The routes are the contract of
// api/auth.yaml; TestRoutes_MatchTheSpec holds them to it, path by path and method by method.
func (s *Service) router() chi.Router {
	r := chi.NewRouter()
	r.Use(securityHeaders)
	r.NotFound(web.NotFound)
	r.MethodNotAllowed(web.MethodNotAllowed)
	if s.opts.LoginPage {
		page := s.LoginPage(s.opts.LoginPageDirect)
		r.Get("/", func(w http.ResponseWriter, r *http.Request) {
			// The page sets its own CSP (nonce-based): drop the deny-all one set above.
			w.Header().Del("Content-Security-Policy")
			page.ServeHTTP(w, r)
		})
	}
	r.Get("/list", s.list)
	r.Get("/user", s.user)
	r.Get("/status", s.status)
	// The routes that can fail inside (a store, a secret, a provider) log on the service's logger:
	// web.Internal writes each failure's ERROR line, with the request id its 500 carries, there.
	// The session reads above never answer 500 and stay free of the layer.
	logged := r.With(web.WithLogger(s.log))
	logged.Get("/logout", s.logout)
	logged.Post("/logout", s.logout)
	for _, action := range []string{"login", "callback", "logout"} {
		logged.Get("/{provider}/"+action, s.providerHandler(action))
		logged.Post("/{provider}/"+action, s.providerHandler(action))
	}
	return r
}

// mountable lets a handler that routes on the path below its mount point also be mounted where the
// full path reaches it (http.ServeMux's "/auth/", chi's Handle("/auth/*")). chi's Mount has already
// set the route path, and http.StripPrefix has already removed the prefix; otherwise a path that
// starts with prefix (the configured AuthPath or AvatarRoutePath) loses it here, so the routes see
// the same path in all three cases.
func mountable(h http.Handler, prefix string) http.Handler {
	prefix = "/" + strings.Trim(prefix, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
			h.ServeHTTP(w, r)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			h.ServeHTTP(w, r)
			return
		}
		if rest == "" {
			rest = "/"
		}
		// The same shallow copy http.StripPrefix makes: the caller's request is left untouched.
		r2 := new(http.Request)
		*r2 = *r
		r2.URL = new(url.URL)
		*r2.URL = *r.URL
		r2.URL.Path = rest
		r2.URL.RawPath = ""
		if rp, ok := strings.CutPrefix(r.URL.RawPath, prefix); ok {
			r2.URL.RawPath = rp
		}
		h.ServeHTTP(w, r2)
	})
}

// securityHeaders hardens every auth response. The CSP forbids everything: these responses are JSON
// or redirects. A provider that renders a form (a login page) replaces the CSP with its own.
// The values are shared read-only slices assigned directly under canonical keys (no map walk, no
// canonicalisation): this runs on every /auth/user call, the hot path of page loads.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Content-Type-Options"] = hdrNoSniff
		h["Content-Security-Policy"] = hdrCSP
		h["X-Frame-Options"] = hdrDeny
		h["Referrer-Policy"] = hdrNoReferrer
		// Responses carry tokens and personal data: never cache them.
		h["Cache-Control"] = hdrNoStore
		next.ServeHTTP(w, r)
	})
}

var (
	hdrNoSniff    = []string{"nosniff"}
	hdrCSP        = []string{"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"}
	hdrDeny       = []string{"DENY"}
	hdrNoReferrer = []string{"no-referrer"}
	hdrNoStore    = []string{"no-store"}
)

func (s *Service) list(w http.ResponseWriter, _ *http.Request) {
	web.WriteJSON(w, http.StatusOK, s.Providers())
}

// maxXSRFHeader bounds X-XSRF-TOKEN as api/auth.yaml does (maxLength of the XSRFHeader
// parameter; TestXSRFHeaderBound_MatchesTheSpec fails when the two differ); a token id is 22 characters.
const maxXSRFHeader = 256

// badXSRFHeader answers 400 validation_failed for an over-long X-XSRF-TOKEN, the same refusal the
// spec-driven validator gives, so the session reads need no validator in front of them.
func (s *Service) badXSRFHeader(w http.ResponseWriter, r *http.Request) bool {
	key := s.jwt.XSRFHeaderKey
	if len(s.jwt.XSRFHeader(r)) <= maxXSRFHeader {
		return false
	}
	web.WriteError(w, r, http.StatusBadRequest, web.Invalid(invalid.Bound(invalid.Header, key, invalid.TooLong, invalid.Int(maxXSRFHeader))))
	return true
}

func (s *Service) user(w http.ResponseWriter, r *http.Request) {
	if s.badXSRFHeader(w, r) {
		return
	}
	u, err := s.auth.Authenticate(w, r)
	if err != nil {
		if !refusal.WriteLoginRefused(w, r, err) {
			middleware.Unauthorized(w, r)
		}
		return
	}
	web.WriteJSON(w, http.StatusOK, &u) // a pointer: boxing the User itself would copy it to the heap
}

// Status is the body of GET /auth/status.
type Status struct {
	// Status is "logged in" or "not logged in".
	Status string `json:"status"`
	// User is the user name when logged in.
	User string `json:"user,omitempty"`
}

func (s *Service) status(w http.ResponseWriter, r *http.Request) {
	if s.badXSRFHeader(w, r) {
		return
	}
	u, err := s.auth.Authenticate(w, r)
	if err != nil {
		web.WriteJSON(w, http.StatusOK, Status{Status: "not logged in"})
		return
	}
	web.WriteJSON(w, http.StatusOK, Status{Status: "logged in", User: u.Name})
}

func (s *Service) logout(w http.ResponseWriter, r *http.Request) {
	if err := s.RevokeSession(r); err != nil {
		web.Internal(w, r, err)
		return
	}
	provider.Logout(w, s.jwt)
}

// RevokeSession ends the session of r's token for good (Options.Sessions), when r carries one that
// verifies (a cookie one with its XSRF header, or an expired cookie one still within the cookie
// lifetime): from then on no token of that session is accepted or refreshed, on any replica that
// shares the store. A request without such a token revokes nothing. The logout routes call it
// before clearing the cookies; a site with its own logout calls it too.
func (s *Service) RevokeSession(r *http.Request) error {
	c, _, err := s.jwt.Get(r)
	if err != nil && !errors.Is(err, token.ErrExpired) || c.ID == "" || c.User == nil || c.Handshake != nil {
		return nil
	}
	start := s.jwt.Now()
	if c.AuthTime != 0 {
		start = time.Unix(c.AuthTime, 0)
	}
	// The session's tokens are refused past its cookie lifetime anyway; one that is not refreshed
	// (a header token) expires earlier still.
	until := start.Add(s.jwt.CookieDuration)
	if c.ExpiresAt != nil && c.ExpiresAt.After(until) {
		until = c.ExpiresAt.Time
	}
	return s.opts.Sessions.Revoke(r.Context(), c.ID, until)
}

func (s *Service) providerHandler(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := chi.URLParam(r, "provider")
		p, ok := s.Provider(name)
		if !ok {
			web.WriteError(w, r, http.StatusBadRequest, web.Error{Code: CodeUnknownProvider, Message: "unknown provider " + safeName(name)})
			return
		}
		switch action {
		case "login":
			p.LoginHandler(w, r)
		case "callback":
			p.AuthHandler(w, r)
		default:
			if err := s.RevokeSession(r); err != nil {
				web.Internal(w, r, err)
				return
			}
			p.LogoutHandler(w, r)
		}
	}
}

// safeName keeps an echoed provider name short and printable.
func safeName(n string) string {
	if !validName.MatchString(n) {
		return "(invalid name)"
	}
	return n
}

// UserFromRequest is token.GetUserInfo, for callers that import only this package.
func UserFromRequest(r *http.Request) (token.User, error) { return token.GetUserInfo(r) }
