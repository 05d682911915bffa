// Package httpapi serves the orders API of api/orders.yaml over HTTP: the hand-written OAuth 2.0
// token endpoint, the bearer-token check and the generated strict server, which translates each
// operation into one call of the orders domain and maps its errors to statuses in one place.
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

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/opaquetoken"
	"github.com/triadhq/triad/impl/orders"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/web"
)

// Options configure the API.
type Options struct {
	// ClientID and ClientSecret authenticate the one OAuth client allowed to use the token endpoint.
	ClientID, ClientSecret string
	// TokenTTL is the access tokens' lifetime (24 h in the seed).
	TokenTTL time.Duration
	// Log receives internal errors; nil discards them.
	Log *slog.Logger
	// Hasher hashes passwords; nil means argon2id with password.Default.
	Hasher *password.Hasher
	// BodyLimit caps request bodies in NewHTTPHandler (cmd/server applies its own); 0 means 1 MiB.
	BodyLimit int64
	// Logins limits failed password logins at the token endpoint per username and client address
	// (throttle.LoginKey); zero fields take throttle's defaults (10 per 15 minutes). The server
	// uses the defaults; tests set a clock. The limit cannot be turned off.
	Logins throttle.Options
}

// API is the orders surface: the domain service, the token store and the HTTP glue.
type API struct {
	svc    *orders.Service
	tokens *opaquetoken.Tokens[*orders.Principal]
	logins *throttle.Limiter
	opts   Options
	log    *slog.Logger
}

// New checks opts and builds the API on pool.
func New(pool *pgxpool.Pool, opts Options) (*API, error) {
	if opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("orders: client id and secret are required")
	}
	if opts.TokenTTL <= 0 {
		return nil, errors.New("orders: token TTL must be positive")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Hasher == nil {
		opts.Hasher = password.New(password.Default)
	}
	tokens, err := opaquetoken.New(orders.NewTokenStore(db.New(pool)),
		opaquetoken.Options{TTL: opts.TokenTTL, CacheFor: TokenCacheFor})
	if err != nil {
		return nil, err
	}
	return &API{
		svc:    orders.NewService(pool, opts.Hasher),
		tokens: tokens,
		logins: throttle.New(pool, opts.Logins),
		opts:   opts,
		log:    opts.Log,
	}, nil
}

// Service is the domain service behind the API (dev data loading uses it).
func (a *API) Service() *orders.Service { return a.svc }

// Tokens is the token store (the server sweeps expired tokens through it).
func (a *API) Tokens() *opaquetoken.Tokens[*orders.Principal] { return a.tokens }

// TokenCacheFor is how long a replica serves a resolved access token from memory: bearer checks
// are on every request's path, and deleting a token's row revokes it on every replica within this
// delay.
const TokenCacheFor = 5 * time.Second

// Mount registers the orders routes on r: POST /oauth/token, POST /users, GET /authenticated,
// /orders and /users/{id}/orders.
func (a *API) Mount(r chi.Router) error {
	spec, err := ordersapi.GetSpec()
	if err != nil {
		return fmt.Errorf("orders spec: %w", err)
	}
	r.Post("/oauth/token", a.issueToken)
	r.Group(func(g chi.Router) {
		// Authentication comes before validation: an anonymous caller learns nothing about inputs.
		g.Use(a.bearer(func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/users" }))
		g.Use(bodiesOnly(web.Validator(spec)))
		strict := ordersapi.NewStrictHandlerWithOptions(&server{a}, nil, ordersapi.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  web.StrictRequestError,
			ResponseErrorHandlerFunc: web.StrictResponseError(a.log),
		})
		ordersapi.HandlerWithOptions(strict, ordersapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: web.BadParam})
	})
	return nil
}

// bodiesOnly applies the spec validator to requests that carry a body (POST /users, POST /orders).
// The other operations take only integer ids and the page parameters, which the generated binders
// (types) and orders.ParsePage (the same bounds and allow-list as the spec) check with the same
// 400 body; skipping kin-openapi there halves the server's own cost of a list page, which the
// `GET /orders` benchmark holds against a raw query.
func bodiesOnly(validate func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		validated := validate(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost || r.Method == http.MethodPut || r.ContentLength > 0 {
				validated.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// NewHTTPHandler is the orders API alone behind the server's shared middleware (request ids, panic
// recovery, body limit, JSON 404/405): what tests and benchmarks serve.
func NewHTTPHandler(pool *pgxpool.Pool, opts Options) (http.Handler, *API, error) {
	a, err := New(pool, opts)
	if err != nil {
		return nil, nil, err
	}
	limit := opts.BodyLimit
	if limit <= 0 {
		limit = 1 << 20
	}
	r := chi.NewRouter()
	r.Use(web.WithRequestID, web.Recover(a.log), web.LimitBody(limit))
	r.NotFound(web.NotFound)
	r.MethodNotAllowed(web.MethodNotAllowed)
	if err := a.Mount(r); err != nil {
		return nil, nil, err
	}
	return r, a, nil
}

// SweepTokens deletes expired tokens every interval until ctx ends.
func (a *API) SweepTokens(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := a.tokens.Sweep(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("orders: sweeping expired tokens", "err", err)
			} else if n > 0 {
				a.log.Debug("orders: swept expired tokens", "count", n)
			}
		}
	}
}
