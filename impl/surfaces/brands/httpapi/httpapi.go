// Package httpapi serves the brands API (api/brands.yaml) over HTTP, built like the orders API on
// the token edge every token-issuing surface shares (impl/kit/tokenedge): the bearer check
// resolves the access token once into a brands.Principal, the generated strict server translates
// each operation into one call of brands.Service and renders its structs (render.go, which also
// caches the two public lists), and the service's errors meet HTTP in one table (refusals.go).
package httpapi

import (
	"context"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// Options configure the HTTP surface: the edge's (TokenTTL 0 uses brands.DefaultTokenTTL).
type Options = tokenedge.Options

// DeviceCookie is the cookie the login keeps a client's device token in.
const DeviceCookie = "brands_device"

// API is the brands surface: the domain service behind the shared token edge.
type API struct {
	svc  *brands.Service
	edge *tokenedge.Edge[brands.Principal]
	// The two public lists, rendered and cached at the edge.
	available, featured listCache
}

// parsedSpec is the generated document, parsed once per process (about 25 ms, ten times that under
// -race) and shared, read-only, by every mount of the surface: web.Validator validates against its
// own copy of what it changes.
var parsedSpec = sync.OnceValues(brandsapi.GetSpec)

// New builds the API over pool.
func New(pool *pgxpool.Pool, opts Options) (*API, error) {
	edge, err := tokenedge.New(pool, tokenedge.Surface[brands.Principal]{
		Name:       "brands",
		Spec:       parsedSpec,
		Tokens:     brands.NewTokenStore,
		TTL:        brands.DefaultTokenTTL,
		Revoked:    brands.TokenRevocationChannel,
		QueryParam: "access_token",
		UserID:     func(p brands.Principal) string { return p.UserID },
		Role:       role,
		// The client address goes to the operations that count failed logins and registrations per address.
		ClientAddr: []string{"LoginUser", "RegisterBrandsUser"},
		// The login keeps a client's device token (OWASP's device cookies) on its own path.
		DeviceCookie: DeviceCookie,
		DevicePath:   "/api/user/login",
		DeviceOps:    []string{"LoginUser"},
		Checks:       fieldChecks,
		Refused:      refusals.ResponseErrorHandler(),
	}, opts)
	if err != nil {
		return nil, err
	}
	opts = edge.Options
	a := &API{
		svc:  brands.NewService(pool, brands.Config{Hasher: opts.Hasher, Tokens: edge.Tokens, Now: opts.Now}),
		edge: edge,
	}
	if opts.Reads != nil {
		a.svc.ReadFrom(opts.Reads)
	}
	// A device cookie is the account's as it is now: a password change ends it, and whoever
	// registers an email its owner gave up does not inherit it.
	edge.Guard.BindDevices(a.svc.DeviceAccount)
	a.available.list, a.featured.list = brands.Available, brands.Featured
	return a, nil
}

// role is a brands user's role as a token source names it: "admin" or "user".
func role(p brands.Principal) string {
	if p.IsAdmin {
		return "admin"
	}
	return "user"
}

// Service is the domain service behind the API (dev data and the first admin use it).
func (a *API) Service() *brands.Service { return a.svc }

// Tokens is the token store.
func (a *API) Tokens() *opaquetoken.Tokens[brands.Principal] { return a.edge.Tokens }

// Edge is the API's token edge (the server names its token source with it).
func (a *API) Edge() *tokenedge.Edge[brands.Principal] { return a.edge }

// Mount registers the routes of api/brands.yaml (all under /api) on r, behind the token edge.
func (a *API) Mount(r chi.Router) error {
	return a.edge.Mount(r, func(g chi.Router, s tokenedge.Strict) {
		strict := brandsapi.NewStrictHandlerWithOptions(&server{a}, []brandsapi.StrictMiddlewareFunc{tokenedge.ClientAddr[brandsapi.StrictHandlerFunc](s), tokenedge.Device[brandsapi.StrictHandlerFunc](s)}, brandsapi.StrictHTTPServerOptions(s.Options))
		brandsapi.HandlerWithOptions(strict, brandsapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: s.BadParam})
	})
}

// principal is the caller the bearer check authenticated.
func principal(ctx context.Context) brands.Principal {
	return tokenedge.Principal[brands.Principal](ctx)
}

// presentedToken is the access token the caller presented: the profile shows it, logout revokes it
// and a password change keeps it.
func presentedToken(ctx context.Context) string { return bearer.Token[brands.Principal](ctx) }
