// Package httpapi serves the brands API (api/brands.yaml) over HTTP, built like the orders API:
// the bearer middleware resolves the access token once into a brands.Principal, the generated
// strict server translates each operation into one call of brands.Service and renders its structs
// (render.go, which also caches the two public lists), and the service's errors meet HTTP in one
// table (refusals.go).
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// Options configure the HTTP surface.
type Options struct {
	// Hasher hashes passwords; nil uses password.Default. Tests pass a cheap one.
	Hasher *password.Hasher
	// TokenTTL is the access token lifetime; 0 uses brands.DefaultTokenTTL.
	TokenTTL time.Duration
	// Now is the clock for token expiry; nil uses time.Now.
	Now func() time.Time
	// Log receives the idempotency key store's warnings; nil discards them. A failed request is
	// logged on the request's logger (router.Options.Log, through web.Internal).
	Log *slog.Logger
	// Revocations relays the database's token revocations to this surface's token cache (the
	// process's one opaquetoken.Watcher): with it, a resolved token is served from memory until
	// its row is deleted (every replica drops it then) or opaquetoken.DefaultCacheFor has passed;
	// nil caches nothing, and every request resolves its token in the database.
	Revocations *opaquetoken.Watcher
	// Reads sends the reads that tolerate a standby's lag (the brand catalog) to a standby, with
	// read-your-writes (pgread); nil reads them from pool.
	Reads *pgread.Reader
	// Logins limits failed logins per email and client address and per client address
	// (throttle.Limiter.ReserveLogin); zero fields take throttle's defaults (10 and 100 per 15
	// minutes). The server uses the defaults; tests set a
	// clock (its own, apart from Now). The limit cannot be turned off.
	Logins throttle.Options
	// Signups caps registrations per client address (loginguard.Signups); zero fields take
	// loginguard.DefaultSignupMax per loginguard.DefaultSignupWindow.
	Signups throttle.Options
	// IdempotencyHold is idempotency.Options.Hold: tests only (a server made to stop at a hold
	// point so a test can kill it there); nil in production.
	IdempotencyHold func(ctx context.Context, point string)
}

// API is the brands surface: the domain service, the token store and the HTTP glue.
type API struct {
	svc     *brands.Service
	tokens  *opaquetoken.Tokens[brands.Principal]
	auth    *bearer.Authenticator[brands.Principal]
	guard   *loginguard.Guard
	signups *loginguard.Signups
	// keys runs the operations that take Idempotency-Key once per key (impl/kit/idempotency).
	keys *idempotency.Keys
	// The two public lists, rendered and cached at the edge.
	available, featured listCache
}

// New builds the API over pool.
func New(pool *pgxpool.Pool, opts Options) (*API, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Hasher == nil {
		opts.Hasher = password.New(password.Default)
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = brands.DefaultTokenTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	tokens, err := opaquetoken.New(brands.NewTokenStore(db.New(pool), opts.Now),
		opaquetoken.Options{TTL: opts.TokenTTL, CacheFor: opaquetoken.DefaultCacheFor, Now: opts.Now})
	if err != nil {
		return nil, err
	}
	opaquetoken.Watch(opts.Revocations, brands.TokenRevocationChannel, tokens)
	spec, err := brandsapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("brands spec: %w", err)
	}
	a := &API{
		svc:     brands.NewService(pool, brands.Config{Hasher: opts.Hasher, Tokens: tokens, Now: opts.Now}),
		tokens:  tokens,
		guard:   loginguard.New(opts.Hasher, throttle.New(pool, opts.Logins), brands.ErrInvalidCredentials),
		signups: loginguard.NewSignups(throttle.New(pool, loginguard.SignupOptions(opts.Signups))),
	}
	if opts.Reads != nil {
		a.svc.ReadFrom(opts.Reads)
	}
	a.keys = idempotency.New(pool, idempotency.Operations(spec), idempotency.Options{Log: opts.Log, Hold: opts.IdempotencyHold})
	a.available.list, a.featured.list = brands.Available, brands.Featured
	a.auth = bearer.New(a.tokens.Resolve, bearer.Options[brands.Principal]{
		Realm:      "brands",
		Public:     bearer.PublicBySpec(spec),
		QueryParam: "access_token",
		IsInvalid:  func(err error) bool { return errors.Is(err, opaquetoken.ErrInvalid) },
		UserID:     func(p brands.Principal) string { return p.UserID },
	})
	return a, nil
}

// Service is the domain service behind the API (dev data and the first admin use it).
func (a *API) Service() *brands.Service { return a.svc }

// Tokens is the token store.
func (a *API) Tokens() *opaquetoken.Tokens[brands.Principal] { return a.tokens }

// Mount registers the routes of api/brands.yaml (all under /api) on r: the bearer check first (a
// caller without a valid token learns that before anything about its input, and nothing parses
// its body), then validation against the spec.
func (a *API) Mount(r chi.Router) error {
	spec, err := brandsapi.GetSpec()
	if err != nil {
		return fmt.Errorf("brands spec: %w", err)
	}
	// The client address goes to the operations that count failed logins and registrations per address.
	clientAddr, err := web.ClientAddrFor[brandsapi.StrictHandlerFunc](spec, "LoginUser", "RegisterBrandsUser")
	if err != nil {
		return err
	}
	return router.Group(r, router.Surface{
		Spec:   spec,
		Before: []func(http.Handler) http.Handler{a.auth.Middleware, a.keys.Middleware},
		Also:   fieldChecks,
	}, func(g chi.Router) {
		strict := brandsapi.NewStrictHandlerWithOptions(&server{a}, []brandsapi.StrictMiddlewareFunc{clientAddr}, brandsapi.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  web.StrictRequestError,
			ResponseErrorHandlerFunc: refusals.ResponseErrorHandler(),
		})
		brandsapi.HandlerWithOptions(strict, brandsapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: web.BadParam})
	})
}

// principal is the caller the bearer middleware authenticated.
func principal(ctx context.Context) brands.Principal {
	p, _ := bearer.From[brands.Principal](ctx)
	return p
}

// presentedToken is the access token the caller presented: the profile shows it, logout revokes it
// and a password change keeps it.
func presentedToken(ctx context.Context) string {
	return bearer.Token[brands.Principal](ctx)
}
