// Package httpapi serves the orders API of api/orders.yaml over HTTP on the token edge every
// token-issuing surface shares (impl/kit/tokenedge: the OAuth 2.0 token endpoint, the bearer check,
// logins, Idempotency-Key): the token endpoint is the edge's password grant over the orders users'
// password check (oauth.go), and the generated strict server translates each other operation into
// one call of the orders domain, whose errors meet HTTP in one table (refusals.go).
package httpapi

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// Options configure the API: the edge's (tokenedge.Options; TokenTTL 0 uses
// orders.DefaultTokenTTL, the seed's 24 h) and the orders surface's own.
type Options struct {
	tokenedge.Options
	// ClientID and ClientSecret authenticate the one OAuth client allowed to use the token endpoint.
	ClientID, ClientSecret string
	// Limits bound what one user may hold (orders IN PROGRESS per performer); zero fields take
	// the orders package's defaults.
	Limits orders.Limits
}

// API is the orders surface: the domain service behind the shared token edge.
type API struct {
	svc  *orders.Service
	edge *tokenedge.Edge[orders.Principal]
	opts Options
	// events counts the orders' moves (EventCreated, ...): triad_orders_events_total.
	events metrics.Events
}

// The events of triad_orders_events_total: the customer's create and accept, and the sweeps'
// acceptance of an order left READY unanswered and return of one left IN PROGRESS untouched.
const (
	EventCreated      = "created"
	EventAccepted     = "accepted"
	EventAutoAccepted = "auto_accepted"
	EventExpired      = "expired"
)

// DeviceCookie is the cookie the token endpoint keeps a client's device token in.
const DeviceCookie = "orders_device"

// parsedSpec is the generated document, parsed once per process (about 25 ms, ten times that under
// -race) and shared, read-only, by every mount of the surface: web.Validator validates against its
// own copy of what it changes.
var parsedSpec = sync.OnceValues(ordersapi.GetSpec)

// New checks opts and builds the API on pool.
func New(pool *pgxpool.Pool, opts Options) (*API, error) {
	if opts.ClientID == "" || opts.ClientSecret == "" {
		return nil, errors.New("orders: client id and secret are required")
	}
	edge, err := tokenedge.New(pool, tokenedge.Surface[orders.Principal]{
		Name:    "orders",
		Spec:    parsedSpec,
		Tokens:  orders.NewTokenStore,
		TTL:     orders.DefaultTokenTTL,
		Revoked: orders.TokenRevocationChannel,
		UserID:  func(p orders.Principal) string { return strconv.FormatInt(p.ID, 10) },
		Role:    func(p orders.Principal) string { return string(p.Type) },
		// The client address goes to the operations that count registrations per address.
		ClientAddr: []string{"RegisterOrdersUser"},
		// The token endpoint (the edge's PasswordGrant, outside the strict server) keeps a client's
		// device token (OWASP's device cookies) on its own path.
		DeviceCookie: DeviceCookie,
		DevicePath:   "/oauth/token",
		// The busiest reads and moves skip the validator when every input is one the spec takes.
		Unvalidated: unvalidated,
		Checks:      fieldChecks,
		Refused:     refusals.ResponseErrorHandler(),
	}, opts.Options)
	if err != nil {
		return nil, err
	}
	opts.Options = edge.Options
	a := &API{
		svc:  orders.NewService(pool, orders.Config{Hasher: opts.Hasher, Limits: opts.Limits}),
		edge: edge,
		opts: opts,
	}
	if opts.Reads != nil {
		a.svc.ReadFrom(opts.Reads)
	}
	// A device cookie is the account's as it is now: a password change ends it, and whoever
	// registers a username its owner gave up does not inherit it.
	edge.Guard.BindDevices(a.svc.DeviceAccount)
	return a, nil
}

// Service is the domain service behind the API (dev data loading uses it).
func (a *API) Service() *orders.Service { return a.svc }

// Tokens is the token store.
func (a *API) Tokens() *opaquetoken.Tokens[orders.Principal] { return a.edge.Tokens }

// Edge is the API's token edge (the server names its token source with it).
func (a *API) Edge() *tokenedge.Edge[orders.Principal] { return a.edge }

// Mount registers the orders routes on r: POST /oauth/token, POST /users, GET /authenticated,
// /orders and /users/{id}/orders.
func (a *API) Mount(r chi.Router) error {
	r.Post("/oauth/token", a.edge.PasswordGrant(tokenedge.Client{ID: a.opts.ClientID, Secret: a.opts.ClientSecret}, a.authenticate))
	return a.edge.Mount(r, func(g chi.Router, s tokenedge.Strict) {
		strict := ordersapi.NewStrictHandlerWithOptions(&server{a}, []ordersapi.StrictMiddlewareFunc{tokenedge.ClientAddr[ordersapi.StrictHandlerFunc](s)}, ordersapi.StrictHTTPServerOptions(s.Options))
		ordersapi.HandlerWithOptions(strict, ordersapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: s.BadParam})
	})
}

// principal is the caller the bearer check authenticated.
func principal(ctx context.Context) orders.Principal {
	return tokenedge.Principal[orders.Principal](ctx)
}
