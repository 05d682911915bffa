// Package bearer is the one authentication middleware of the token surfaces: it takes the access
// token a request presents (RFC 6750: an Authorization: Bearer header, or a query parameter where
// a surface's spec allows one), resolves it once into the surface's principal, and hands the
// principal to the handlers through the request context. A surface supplies the resolver (its
// token store, which may cache until the token is revoked; see opaquetoken) and the predicate telling
// which operations need no token (PublicBySpec).
package bearer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/triadhq/triad/impl/kit/web"
)

// ErrInvalid is an unknown, malformed, expired or revoked token; resolvers return it (or wrap it).
var ErrInvalid = errors.New("bearer: invalid token")

// Resolver looks a presented token up: its principal, or an error for which Options.IsInvalid
// holds when the token authenticates nobody.
type Resolver[P any] func(ctx context.Context, tok string) (P, error)

// Options configure an Authenticator of principals P.
type Options[P any] struct {
	// Realm names the surface in WWW-Authenticate challenges.
	Realm string
	// Public reports whether a request's operation needs no token (PublicBySpec). A token it
	// presents anyway is not looked at. nil means every request needs one.
	Public func(*http.Request) bool
	// QueryParam, when not "", also takes the token from this query parameter; it wins over the
	// header (the brands API's original way).
	QueryParam string
	// IsInvalid tells a resolver's "no such token" from a failure; nil matches ErrInvalid.
	IsInvalid func(error) bool
	// Log receives resolver failures; nil discards them.
	Log *slog.Logger
	// UserID, when set, names the user of a resolved principal: for the request's access log
	// line (web.SetUser) and for what is kept per user whatever token the user presents (UserOf:
	// the Idempotency-Key scope). nil logs no user, and UserOf names the token instead.
	UserID func(P) string
}

// Authenticator is the middleware.
type Authenticator[P any] struct {
	resolve Resolver[P]
	o       Options[P]
}

// New returns an Authenticator resolving tokens with resolve.
func New[P any](resolve Resolver[P], o Options[P]) *Authenticator[P] {
	if o.IsInvalid == nil {
		o.IsInvalid = func(err error) bool { return errors.Is(err, ErrInvalid) }
	}
	return &Authenticator[P]{resolve: resolve, o: o}
}

type ctxKey struct{}

type caller[P any] struct {
	tok string
	p   P
}

type userKey struct{}

// UserOf names the caller the middleware authenticated, the same for every token of one user:
// Options.UserID's name prefixed "user ", or, for a surface that names no users, "token " and a
// hash of the token. false on a public request.
func UserOf(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(userKey{}).(string)
	return u, ok
}

// From returns the principal the middleware authenticated, or the zero value and false on a
// public request.
func From[P any](ctx context.Context) (P, bool) {
	if c, ok := ctx.Value(ctxKey{}).(*caller[P]); ok {
		return c.p, true
	}
	var zero P
	return zero, false
}

// Token returns the access token the middleware authenticated, or "".
func Token[P any](ctx context.Context) string {
	if c, ok := ctx.Value(ctxKey{}).(*caller[P]); ok {
		return c.tok
	}
	return ""
}

// Presented returns the token r carries, or "".
func (a *Authenticator[P]) Presented(r *http.Request) string {
	if a.o.QueryParam != "" {
		if tok := r.URL.Query().Get(a.o.QueryParam); tok != "" {
			return tok
		}
	}
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Middleware requires a valid token on every request that is not public. A missing token gets a
// challenge without an error code, a bad one error="invalid_token" (RFC 6750 §3.1); both are 401
// with the shared Error body, before anything else about the request is looked at. Every answer
// to a request that needs a token carries Cache-Control: no-store: it is about the caller (a
// balance, a profile, its orders), and a browser or a shared cache that kept it would show it to
// the next user of the machine or the proxy.
func (a *Authenticator[P]) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.o.Public != nil && a.o.Public(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		tok := a.Presented(r)
		if tok == "" {
			a.unauthorized(w, r, `Bearer realm="`+a.o.Realm+`"`)
			return
		}
		p, err := a.resolve(r.Context(), tok)
		if err != nil && a.o.IsInvalid(err) {
			a.unauthorized(w, r, `Bearer realm="`+a.o.Realm+`", error="invalid_token"`)
			return
		}
		if err != nil {
			web.Internal(w, r, err)
			return
		}
		var user string
		if a.o.UserID != nil {
			id := a.o.UserID(p)
			web.SetUser(r.Context(), id)
			user = "user " + id
		} else {
			user = fmt.Sprintf("token %x", sha256.Sum256([]byte(tok)))
		}
		ctx := context.WithValue(r.Context(), ctxKey{}, &caller[P]{tok: tok, p: p})
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, userKey{}, user)))
	})
}

// unauthorized answers 401 with the shared body, whose message is the same for a missing and a
// refused token: the challenge tells them apart.
func (a *Authenticator[P]) unauthorized(w http.ResponseWriter, r *http.Request, challenge string) {
	w.Header().Set("WWW-Authenticate", challenge)
	web.WriteError(w, r, http.StatusUnauthorized, web.Unauthorized())
}
