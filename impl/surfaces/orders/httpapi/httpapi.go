// Package httpapi serves the orders API of api/orders.yaml over HTTP: the hand-written OAuth 2.0
// token endpoint, the bearer-token check and the generated strict server, which translates each
// operation into one call of the orders domain; its errors meet HTTP in one table (refusals.go).
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// Options configure the API.
type Options struct {
	// ClientID and ClientSecret authenticate the one OAuth client allowed to use the token endpoint.
	ClientID, ClientSecret string
	// TokenTTL is the access tokens' lifetime; 0 uses orders.DefaultTokenTTL (24 h, the seed's).
	TokenTTL time.Duration
	// Log receives the idempotency key store's warnings; nil discards them. A failed request is
	// logged on the request's logger (router.Options.Log, through web.Internal).
	Log *slog.Logger
	// Revocations relays the database's token revocations to this surface's token cache (the
	// process's one opaquetoken.Watcher): with it, a resolved token is served from memory until
	// its row is deleted (every replica drops it then) or opaquetoken.DefaultCacheFor has passed;
	// nil caches nothing, and every request resolves its token in the database.
	Revocations *opaquetoken.Watcher
	// Reads sends the reads that tolerate a standby's lag (the list pages) to a standby, with
	// read-your-writes (pgread); nil reads them from pool.
	Reads *pgread.Reader
	// Hasher hashes passwords; nil means argon2id with password.Default.
	Hasher *password.Hasher
	// Logins limits failed password logins at the token endpoint per username and client address
	// and per client address (throttle.Limiter.ReserveLogin); zero fields take throttle's defaults
	// (10 and 100 per 15 minutes). The server
	// uses the defaults; tests set a clock. The limit cannot be turned off.
	Logins throttle.Options
	// Limits bound what one user may hold (orders IN PROGRESS per performer); zero fields take
	// the orders package's defaults.
	Limits orders.Limits
	// Signups caps registrations (POST /users) per client address (loginguard.Signups); zero
	// fields take loginguard.DefaultSignupMax per loginguard.DefaultSignupWindow.
	Signups throttle.Options
	// IdempotencyHold is idempotency.Options.Hold: tests only (a server made to stop at a hold
	// point so a test can kill it there); nil in production.
	IdempotencyHold func(ctx context.Context, point string)
}

// API is the orders surface: the domain service, the token store and the HTTP glue.
type API struct {
	svc     *orders.Service
	tokens  *opaquetoken.Tokens[orders.Principal]
	auth    *bearer.Authenticator[orders.Principal]
	guard   *loginguard.Guard
	signups *loginguard.Signups
	opts    Options
	// keys runs the operations that take Idempotency-Key once per key (impl/kit/idempotency).
	keys *idempotency.Keys
}

// New checks opts and builds the API on pool.
func New(pool *pgxpool.Pool, opts Options) (*API, error) {
	if opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("orders: client id and secret are required")
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = orders.DefaultTokenTTL
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Hasher == nil {
		opts.Hasher = password.New(password.Default)
	}
	tokens, err := opaquetoken.New(orders.NewTokenStore(db.New(pool), nil),
		opaquetoken.Options{TTL: opts.TokenTTL, CacheFor: opaquetoken.DefaultCacheFor})
	if err != nil {
		return nil, err
	}
	opaquetoken.Watch(opts.Revocations, orders.TokenRevocationChannel, tokens)
	spec, err := ordersapi.GetSpec()
	if err != nil {
		return nil, fmt.Errorf("orders spec: %w", err)
	}
	a := &API{
		svc:     orders.NewService(pool, orders.Config{Hasher: opts.Hasher, Limits: opts.Limits}),
		tokens:  tokens,
		guard:   loginguard.New(opts.Hasher, throttle.New(pool, opts.Logins), orders.ErrInvalidCredentials),
		signups: loginguard.NewSignups(throttle.New(pool, loginguard.SignupOptions(opts.Signups))),
		opts:    opts,
	}
	if opts.Reads != nil {
		a.svc.ReadFrom(opts.Reads)
	}
	a.keys = idempotency.New(pool, idempotency.Operations(spec), idempotency.Options{Log: opts.Log, Hold: opts.IdempotencyHold})
	a.auth = bearer.New(a.tokens.Resolve, bearer.Options[orders.Principal]{
		Realm:     "orders",
		Public:    bearer.PublicBySpec(spec),
		IsInvalid: func(err error) bool { return errors.Is(err, opaquetoken.ErrInvalid) },
		UserID:    func(p orders.Principal) string { return strconv.FormatInt(p.ID, 10) },
	})
	return a, nil
}

// Service is the domain service behind the API (dev data loading uses it).
func (a *API) Service() *orders.Service { return a.svc }

// Tokens is the token store.
func (a *API) Tokens() *opaquetoken.Tokens[orders.Principal] { return a.tokens }

// Mount registers the orders routes on r: POST /oauth/token, POST /users, GET /authenticated,
// /orders and /users/{id}/orders.
func (a *API) Mount(r chi.Router) error {
	spec, err := ordersapi.GetSpec()
	if err != nil {
		return fmt.Errorf("orders spec: %w", err)
	}
	r.Post("/oauth/token", a.issueToken)
	// The client address goes to the operations that count registrations per address.
	clientAddr, err := web.ClientAddrFor[ordersapi.StrictHandlerFunc](spec, "RegisterOrdersUser")
	if err != nil {
		return err
	}
	return router.Group(r, router.Surface{
		Spec:     spec,
		Before:   []func(http.Handler) http.Handler{a.auth.Middleware, a.keys.Middleware},
		Validate: validated,
		Also:     fieldChecks,
	}, func(g chi.Router) {
		strict := ordersapi.NewStrictHandlerWithOptions(&server{a}, []ordersapi.StrictMiddlewareFunc{clientAddr}, ordersapi.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  web.StrictRequestError,
			ResponseErrorHandlerFunc: refusals.ResponseErrorHandler(),
		})
		ordersapi.HandlerWithOptions(strict, ordersapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: web.BadParam})
	})
}

// principal is the caller the bearer middleware authenticated.
func principal(ctx context.Context) orders.Principal {
	p, _ := bearer.From[orders.Principal](ctx)
	return p
}
