package token

import (
	"context"
	"errors"
	"net/http"
)

type ctxKey struct{}

// SetUserInfo returns r with u in its context.
func SetUserInfo(r *http.Request, u User) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, u))
}

// ErrNoUser: the request context holds no user (no auth middleware, or Trace without a login).
var ErrNoUser = errors.New("token: no user in request context")

// GetUserInfo returns the user the middleware put in the request context.
func GetUserInfo(r *http.Request) (User, error) {
	if u, ok := r.Context().Value(ctxKey{}).(User); ok {
		return u, nil
	}
	return User{}, ErrNoUser
}

// MustGetUserInfo returns the user of the request and panics when there is none: use it only
// behind the Auth middleware, where a missing user is a wiring bug.
func MustGetUserInfo(r *http.Request) User {
	u, err := GetUserInfo(r)
	if err != nil {
		panic(err)
	}
	return u
}
