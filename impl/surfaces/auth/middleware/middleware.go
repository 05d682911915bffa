// Package middleware authenticates requests for the auth service: Auth (a user is required),
// Admin, RBAC (a role is required), Trace (a user is added when present) and UpdateUser (a per-request
// user hook). It accepts the service's JWT (cookie + XSRF header, X-JWT header, token query) and, when
// enabled, HTTP basic auth. The user goes into the request context (token.GetUserInfo).
package middleware

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/surfaces/auth/sessions"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TokenService is what the middleware needs of the token service; *token.Service implements it.
type TokenService interface {
	Get(r *http.Request) (token.Claims, string, error)
	Set(w http.ResponseWriter, claims token.Claims) (token.Claims, error)
	Token(claims token.Claims) (string, error)
}

// UserUpdater changes the user on every request wrapped by UpdateUser (e.g. loads fresh data).
type UserUpdater interface {
	Update(u token.User) token.User
}

// UserUpdFunc adapts a function to UserUpdater.
type UserUpdFunc func(u token.User) token.User

// Update calls f.
func (f UserUpdFunc) Update(u token.User) token.User { return f(u) }

// BasicAuthFunc checks basic-auth credentials and returns the user to put in the request context.
type BasicAuthFunc func(user, passwd string) (ok bool, u token.User, err error)

// ErrorHandlerFunc writes a refusal of the middleware: status is 401 (no or bad credentials), 403
// (Admin, RBAC) or 429 (basic auth refused by the LoginGuard; Retry-After is already set), err says
// why (for logs: never send it to the client verbatim).
type ErrorHandlerFunc func(w http.ResponseWriter, r *http.Request, status int, err error)

// Authenticator builds the middlewares. Configure it once; it is safe for concurrent use.
type Authenticator struct {
	// JWTService reads and refreshes tokens. Required.
	JWTService TokenService
	// Validator, when set, runs on every request with a token; false rejects it.
	Validator token.Validator
	// AdminPasswd enables basic auth for the user "admin" with this password.
	AdminPasswd string
	// BasicAuthChecker enables basic auth with a custom check; when set, AdminPasswd is ignored.
	BasicAuthChecker BasicAuthFunc
	// Sessions, when set, refuses tokens of sessions revoked at logout (checked right after the
	// token is verified, before any refresh, so a revoked cookie is never refreshed either).
	Sessions sessions.Store
	// LoginGuard limits failed basic-auth passwords (per user name and client address); nil
	// checks them without a limit (the auth service always sets one).
	LoginGuard loginlimit.Guard
	// UserUpdater is the hook of UpdateUser.
	UserUpdater UserUpdater
	// ProviderKnown, when set, rejects tokens whose user comes from a provider it does not know
	// (e.g. one removed from the configuration since the token was issued).
	ProviderKnown func(name string) bool
	// ErrorHandler, when set, writes the refusals of Auth, Admin and RBAC (a site's own HTML page,
	// a redirect to its login); nil writes the JSON Error body.
	ErrorHandler ErrorHandlerFunc
	// RolesIgnoreCase makes RBAC compare roles case-insensitively ("Editor" matches "editor").
	RolesIgnoreCase bool
	// L logs refusals at debug level; nil is silent.
	L *slog.Logger
}

// Errors passed to ErrorHandler with a 403.
var (
	ErrNotAdmin    = errors.New("middleware: administrator only")
	ErrRoleRefused = errors.New("middleware: role not permitted")
)

// refuse writes a refusal through ErrorHandler, or as the JSON Error body. Basic-auth credentials
// the LoginGuard refused are a 429 with Retry-After, whatever status the caller meant.
func (a *Authenticator) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	if secs, _, refused := loginguard.Refused(err); refused {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		status = http.StatusTooManyRequests
	}
	if a.ErrorHandler != nil {
		a.ErrorHandler(w, r, status, err)
		return
	}
	if status == http.StatusForbidden {
		msg := "forbidden"
		switch {
		case errors.Is(err, ErrNotAdmin):
			msg = "administrator only"
		case errors.Is(err, ErrRoleRefused):
			msg = "role not permitted"
		}
		Forbidden(w, r, msg)
		return
	}
	if refusal.WriteLoginRefused(w, r, err) {
		return
	}
	Unauthorized(w, r)
}

// Refusal codes of the JSON bodies: 401 {"code":"unauthorized",...}, 403 {"code":"forbidden",...},
// 429 {"code":"too_many_attempts",...} (basic auth refused by the LoginGuard).
const (
	CodeUnauthorized    = web.CodeUnauthorized
	CodeForbidden       = web.CodeForbidden
	CodeTooManyAttempts = refusal.CodeTooManyAttempts
)

// ErrRevoked joins ErrUnauthorized for a token whose session was revoked (logout).
var ErrRevoked = errors.New("middleware: session revoked")

// ErrUnauthorized is returned by Authenticate when the request has no acceptable credentials.
var ErrUnauthorized = errors.New("middleware: unauthorized")

// Unauthorized writes the 401 JSON refusal.
func Unauthorized(w http.ResponseWriter, r *http.Request) {
	web.WriteError(w, r, http.StatusUnauthorized, web.Unauthorized())
}

// Forbidden writes the 403 JSON refusal.
func Forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	web.WriteError(w, r, http.StatusForbidden, web.Error{Code: CodeForbidden, Message: msg})
}

// Authenticate finds the user of a request: basic auth when enabled and sent, else the token,
// refreshing an expired cookie token (same id) through the token service. It may set cookies on w.
// The user found is recorded for the request's access log line (web.SetUser), and the response is
// marked Cache-Control: no-store: what a handler answers an authenticated user is that user's, and
// no browser or shared cache may keep it (a handler may still set its own).
func (a *Authenticator) Authenticate(w http.ResponseWriter, r *http.Request) (token.User, error) {
	u, err := a.authenticate(w, r)
	if err == nil {
		web.SetUser(r.Context(), u.ID)
		w.Header()["Cache-Control"] = noStore // canonical key, shared value: no slice per request
	}
	return u, err
}

// noStore is never changed: an Add to the header appends to a full slice, which copies it.
var noStore = []string{"no-store"}

func (a *Authenticator) authenticate(w http.ResponseWriter, r *http.Request) (token.User, error) {
	if a.BasicAuthChecker != nil || a.AdminPasswd != "" {
		if user, pass, ok := r.BasicAuth(); ok {
			return a.basicGuarded(w, r, user, pass)
		}
	}
	claims, tok, err := a.JWTService.Get(r)
	if (err == nil || errors.Is(err, token.ErrExpired)) && a.Sessions != nil && claims.ID != "" && a.Sessions.Revoked(claims.ID) {
		// Verified, but its session was ended by a logout: a captured token is worth nothing.
		return token.User{}, errors.Join(ErrUnauthorized, ErrRevoked)
	}
	if errors.Is(err, token.ErrExpired) {
		// Within the cookie lifetime (checked by Get) an expired cookie token is re-issued; the
		// ClaimsUpdater runs again, so a block set there takes effect at refresh.
		claims, tok, err = a.refresh(w, claims)
	}
	if err != nil {
		return token.User{}, errors.Join(ErrUnauthorized, err)
	}
	return a.accept(tok, claims)
}

// accept is what every verified, unrevoked token must also pass to name a user: a user and no
// handshake, a registered provider, the Validator.
func (a *Authenticator) accept(tok string, claims token.Claims) (token.User, error) {
	if claims.User == nil || claims.Handshake != nil {
		return token.User{}, ErrUnauthorized
	}
	if a.ProviderKnown != nil && !a.ProviderKnown(claims.ProviderName()) {
		return token.User{}, errors.Join(ErrUnauthorized, errors.New("provider not registered"))
	}
	if a.Validator != nil && !a.Validator.Validate(tok, claims) {
		return token.User{}, errors.Join(ErrUnauthorized, errors.New("rejected by validator"))
	}
	u := *claims.User
	if u.Audience == "" {
		// Tokens of other issuers (go-pkgz/auth) carry the site only in aud.
		u.Audience = claims.Aud()
	}
	return u, nil
}

// TokenParser is a TokenService that also verifies a bare token string (token.Service does).
type TokenParser interface {
	Parse(tok string) (token.Claims, error)
}

// ErrNoParser is UserOfToken's answer when JWTService cannot verify a bare token.
var ErrNoParser = errors.New("middleware: the token service cannot parse a bare token")

// UserOfToken finds the user a bare token names, by the rules Authenticate applies to a token sent
// in the header: verified, its session not revoked, then accept. An expired token is refused, as
// only a cookie is refreshed. It lets another API accept the auth service's JWT as a credential
// (cmd/server offers it as the token source "auth").
func (a *Authenticator) UserOfToken(tok string) (token.User, error) {
	p, ok := a.JWTService.(TokenParser)
	if !ok {
		return token.User{}, ErrNoParser
	}
	claims, err := p.Parse(tok)
	if err != nil {
		return token.User{}, errors.Join(ErrUnauthorized, err)
	}
	if a.Sessions != nil && claims.ID != "" && a.Sessions.Revoked(claims.ID) {
		return token.User{}, errors.Join(ErrUnauthorized, ErrRevoked)
	}
	return a.accept(tok, claims)
}

// refresh re-issues an expired cookie token and returns the new claims and token string (the
// Validator sees the token the client will hold from now on).
func (a *Authenticator) refresh(w http.ResponseWriter, c token.Claims) (token.Claims, string, error) {
	if c.User == nil || c.Handshake != nil {
		return token.Claims{}, "", ErrUnauthorized
	}
	if a.ProviderKnown != nil && !a.ProviderKnown(c.ProviderName()) {
		return token.Claims{}, "", errors.New("provider not registered")
	}
	if st, ok := a.JWTService.(tokenSetter); ok {
		return st.SetToken(w, c)
	}
	c, err := a.JWTService.Set(w, c)
	if err != nil {
		return token.Claims{}, "", err
	}
	// HS256 is deterministic: signing the returned claims again yields the cookie's token.
	tok, err := a.JWTService.Token(c)
	return c, tok, err
}

// tokenSetter is a TokenService that returns the token it sets (*token.Service does), so a
// refresh signs once; other TokenServices are signed a second time for the Validator.
type tokenSetter interface {
	SetToken(w http.ResponseWriter, claims token.Claims) (token.Claims, string, error)
}

// basicGuarded checks basic-auth credentials under the LoginGuard: refused (too many failures)
// without checking them, or checked, a wrong password counted; a device cookie to keep is set on
// w (loginlimit.Run).
func (a *Authenticator) basicGuarded(w http.ResponseWriter, r *http.Request, user, pass string) (token.User, error) {
	var u token.User
	check := func(context.Context) error {
		var ok bool
		var err error
		if u, ok, err = a.basic(user, pass); err == nil && !ok {
			return loginlimit.ErrBadCredentials
		}
		return err
	}
	var err error
	if a.LoginGuard != nil {
		err = loginlimit.Run(w, r, a.LoginGuard, user, check)
	} else {
		err = check(r.Context())
	}
	if err != nil {
		return token.User{}, errors.Join(ErrUnauthorized, err)
	}
	return u, nil
}

// basic checks the credentials: ok false for wrong ones, an error when the checker failed.
func (a *Authenticator) basic(user, pass string) (u token.User, ok bool, err error) {
	if a.BasicAuthChecker != nil {
		ok, u, err := a.BasicAuthChecker(user, pass)
		return u, ok, err
	}
	// Constant-time on both parts so timing reveals neither the user name nor the password.
	uok := subtle.ConstantTimeCompare([]byte(user), []byte("admin"))
	pok := subtle.ConstantTimeCompare([]byte(pass), []byte(a.AdminPasswd))
	if uok&pok != 1 {
		return token.User{}, false, nil
	}
	u = token.User{Name: "admin", ID: "admin", Role: "admin"}
	u.SetAdmin(true)
	return u, true, nil
}

func (a *Authenticator) log() *slog.Logger {
	if a.L == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.L
}

// Auth requires an authenticated user; otherwise it answers 401.
func (a *Authenticator) Auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := a.Authenticate(w, r)
		if err != nil {
			a.log().DebugContext(r.Context(), "auth refused", "method", r.Method, "path", r.URL.Path, "err", err)
			a.refuse(w, r, http.StatusUnauthorized, err)
			return
		}
		next.ServeHTTP(w, token.SetUserInfo(r, u))
	})
}

// Trace adds the user to the request when there is one and never refuses.
func (a *Authenticator) Trace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, err := a.Authenticate(w, r); err == nil {
			r = token.SetUserInfo(r, u)
		}
		next.ServeHTTP(w, r)
	})
}

// Admin requires an authenticated administrator: 401 without a user, 403 for other users.
func (a *Authenticator) Admin(next http.Handler) http.Handler {
	return a.require(func(u token.User) bool { return u.IsAdmin() }, ErrNotAdmin, next)
}

// RBAC requires an authenticated user whose Role is one of roles: 401 without a user, 403 otherwise.
func (a *Authenticator) RBAC(roles ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return a.require(func(u token.User) bool {
			if a.RolesIgnoreCase {
				return slices.ContainsFunc(roles, func(role string) bool { return strings.EqualFold(role, u.Role) })
			}
			return slices.Contains(roles, u.Role)
		}, ErrRoleRefused, next)
	}
}

func (a *Authenticator) require(ok func(token.User) bool, refusal error, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := a.Authenticate(w, r)
		if err != nil {
			a.refuse(w, r, http.StatusUnauthorized, err)
			return
		}
		if !ok(u) {
			a.refuse(w, r, http.StatusForbidden, refusal)
			return
		}
		next.ServeHTTP(w, token.SetUserInfo(r, u))
	})
}

// UpdateUser runs the UserUpdater on the user in the request context (put there by Auth or Trace
// earlier in the chain). Requests without a user pass unchanged.
func (a *Authenticator) UpdateUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.UserUpdater != nil {
			if u, err := token.GetUserInfo(r); err == nil {
				r = token.SetUserInfo(r, a.UserUpdater.Update(u))
			}
		}
		next.ServeHTTP(w, r)
	})
}
