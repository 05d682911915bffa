package main

import (
	"context"
	"errors"
	"time"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/platform/sweep"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	brandshttp "github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	ordershttp "github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// surface is one API: its name (its spec is api/<name>.yaml) and its mount, made from the
// server's configuration.
type surface struct {
	name  string
	mount func(*app) kit.Mount
}

// surfaces mount the APIs, one per spec in api/ (TestSurfaces_EverySpecIsMounted), every one the
// same way: a kit.Mount called with the server's kit.Deps (app.deps). orders and brands make
// theirs from their settings (config.go); a surface made by `make new-surface` is one line at the
// end, with its import (docs/adding-a-surface.md). The order is /docs' order; nothing else depends
// on it (token sources are resolved by name once all are mounted).
var surfaces = []surface{
	{"orders", func(a *app) kit.Mount { return ordershttp.Mount(a.cfg.Orders.settings()) }},
	{"brands", func(a *app) kit.Mount { return brandshttp.Mount(a.cfg.Brands.settings()) }},
	{"auth", func(a *app) kit.Mount { return a.mountAuth }},
	// new surfaces: make new-surface adds its line above this one.
}

// kitSurface registers a surface whose mount needs no settings of its own.
func kitSurface(name string, mount kit.Mount) surface {
	return surface{name, func(*app) kit.Mount { return mount }}
}

// deps are what the server hands the surface name: the database, its logger, the token sources,
// and the shared machinery (the password hasher, whose queue the metrics watch, with
// LOGIN_CLIENT_QUEUE; the failed-login limit, whose refusals the metrics count; the registration
// cap, SIGNUP_MAX per SIGNUP_WINDOW per client address; background sweeps stopped at shutdown).
func (a *app) deps(name string) kit.Deps {
	l := a.cfg.Logins
	return kit.Deps{
		Pool: a.pool, Log: a.log.With("surface", name), Tokens: a.tokens, Dev: a.cfg.IsDev(),
		Revocations: a.revocations, Reads: a.reads, Direct: a.direct,
		Hasher: func() *password.Hasher {
			h := password.New(password.Default)
			h.SetClientLine(l.ClientQueue)
			a.metrics.WatchHashQueue(name, h.Waiting)
			return h
		},
		Logins:          func() throttle.Options { return a.loginLimits(name) },
		Signups:         throttle.Options{Max: l.SignupMax, Window: l.SignupWindow},
		Devices:         a.deviceSigner(name),
		SecureCookies:   secureCookies(a.cfg.Auth),
		IdempotencyHold: a.idempotencyHold(),
		Sweep: func(what string, every time.Duration, f func(context.Context) (int64, error)) {
			a.onClose(sweep.Start(a.log, what, every, f))
		},
		OnClose:  a.onClose,
		DevReset: a.devReset(),
	}
}

// devReset is kit.Deps.DevReset: in dev mode, a surface's reset joins POST /dev/reset; nil
// otherwise.
func (a *app) devReset() func(string, func(context.Context) error) {
	if a.devResets == nil {
		return nil
	}
	return a.devResets.add
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
