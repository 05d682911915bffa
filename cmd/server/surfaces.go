package main

import (
	"context"
	"errors"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
)

// surface is one API: its name (its spec is api/<name>.yaml) and what mounts it on the root router.
type surface struct {
	name  string
	mount func(*app, chi.Router) error
}

// surfaces mount the APIs, one per spec in api/ (TestSurfaces_EverySpecIsMounted). The first three
// have their own files here; a surface made by `make new-surface` is one line at the end, with its
// import (docs/adding-a-surface.md). The order is /docs' order; nothing else depends on it (token
// sources are resolved by name once all are mounted).
var surfaces = []surface{
	{"orders", (*app).mountOrders},
	{"brands", (*app).mountBrands},
	{"auth", (*app).mountAuth},
	// new surfaces: make new-surface adds its line above this one.
}

// kitSurface registers a surface built on the kit: mount gets the database, the logger and the
// token sources.
func kitSurface(name string, mount func(kit.Deps, chi.Router) error) surface {
	return surface{name, func(a *app, r chi.Router) error {
		return mount(kit.Deps{Pool: a.pool, Log: a.log.With("surface", name), Tokens: a.tokens}, r)
	}}
}

// authTokenSource makes the auth service's JWT the token source "auth": a token the auth
// middleware would accept in its header (verified, its session not ended by a logout, of a
// registered provider) becomes a kit.Caller with the user's id and the role "admin" or "user".
func authTokenSource(m *middleware.Authenticator) kit.Resolver {
	return func(_ context.Context, tok string) (kit.Caller, error) {
		u, err := m.UserOfToken(tok)
		if errors.Is(err, middleware.ErrUnauthorized) {
			return kit.Caller{}, bearer.ErrInvalid
		}
		if err != nil {
			return kit.Caller{}, err
		}
		role := "user"
		if u.IsAdmin() {
			role = "admin"
		}
		return kit.Caller{Source: "auth", UserID: u.ID, Role: role}, nil
	}
}
