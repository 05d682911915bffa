package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/triadhq/triad/impl/opaquetoken"
	"github.com/triadhq/triad/impl/orders"
	"github.com/triadhq/triad/impl/web"
)

type principalKey struct{}

// principal is the caller the bearer middleware authenticated.
func principal(ctx context.Context) orders.Principal {
	if p, ok := ctx.Value(principalKey{}).(*orders.Principal); ok {
		return *p
	}
	return orders.Principal{}
}

// bearer requires an RFC 6750 bearer token on every request except the public ones. A missing
// token gets a challenge without an error code, a wrong or expired one error="invalid_token"
// (RFC 6750 §3.1); both are 401 with the Error body.
func (a *API) bearer(public func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if public(r) {
				next.ServeHTTP(w, r)
				return
			}
			// Another scheme (or none) means no bearer token was offered: a plain challenge.
			scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || tok == "" {
				unauthorized(w, r, `Bearer realm="orders"`, "an access token is required: Authorization: Bearer <token>")
				return
			}
			p, err := a.tokens.Resolve(r.Context(), tok)
			if errors.Is(err, opaquetoken.ErrInvalid) {
				unauthorized(w, r, `Bearer realm="orders", error="invalid_token"`, "the access token is unknown or expired")
				return
			}
			if err != nil {
				web.Internal(w, r, a.log, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
		})
	}
}

func unauthorized(w http.ResponseWriter, r *http.Request, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	web.WriteError(w, r, http.StatusUnauthorized, web.Error{Code: web.CodeUnauthorized, Message: msg})
}
