// Package tokenedge is the HTTP edge of a surface that issues its own opaque access tokens
// (orders, brands): the token store and its cache, the password logins that mint tokens (the
// login guard with its device cookie, the sign-up cap, and an OAuth 2.0 token endpoint for a
// surface that has one: grant.go), the bearer check that resolves a token once into the surface's
// principal, the Idempotency-Key store, and the mount of the generated strict server behind them.
// A surface says what is its own in a Surface (its spec, token table, realm, refusals, field
// checks) and gets the rest here, once, so two surfaces cannot drift apart in how they guard a
// request.
package tokenedge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform/pgread"
)

// Options configure a token-issuing surface's edge: the same settings for every such surface.
type Options struct {
	// Hasher hashes passwords; nil means argon2id with password.Default. Tests pass a cheap one.
	Hasher *password.Hasher
	// TokenTTL is the access tokens' lifetime; 0 takes the surface's default (Surface.TTL).
	TokenTTL time.Duration
	// Now is the clock token expiry is judged by; nil means time.Now. Tests move it forward.
	Now func() time.Time
	// Log receives the idempotency key store's warnings; nil discards them. A failed request is
	// logged on the request's logger (router.Options.Log, through web.Internal).
	Log *slog.Logger
	// Revocations relays the database's token revocations to this surface's token cache (the
	// process's one opaquetoken.Watcher): with it, a resolved token is served from memory until
	// its row is deleted (every replica drops it then) or opaquetoken.DefaultCacheFor has passed;
	// nil caches nothing, and every request resolves its token in the database.
	Revocations *opaquetoken.Watcher
	// Reads sends the reads that tolerate a standby's lag (lists, catalogs) to a standby, with
	// read-your-writes (pgread); nil reads them from the pool.
	Reads *pgread.Reader
	// Logins limits failed password logins per account and client address and per client
	// address (throttle.Limiter.ReserveLogin); zero fields take throttle's defaults (10 and 100 per
	// 15 minutes). The server uses the defaults; tests set a clock (its own, apart from Now). The
	// limit cannot be turned off.
	Logins throttle.Options
	// Signups caps registrations per client address (loginguard.Signups); zero fields take
	// loginguard.DefaultSignupMax per loginguard.DefaultSignupWindow.
	Signups throttle.Options
	// IdempotencyHold is idempotency.Options.Hold: tests only (a server made to stop at a hold
	// point so a test can kill it there); nil in production.
	IdempotencyHold func(ctx context.Context, point string)
	// Devices signs the device tokens a successful password login hands out in the surface's
	// device cookie (Surface.DeviceCookie; loginguard.Guard.LoginDevice: the client's later logins
	// are never locked out by others' guesses); nil hands out none and trusts none.
	Devices *device.Signer
	// SecureCookies marks the device cookie Secure (the site is served over https).
	SecureCookies bool
}

// Surface is what is a token-issuing surface's own: everything the edge cannot know.
type Surface[P any] struct {
	// Name is the surface's name: the realm of its WWW-Authenticate challenges and the name of
	// its token source (kit.Sources).
	Name string
	// Spec returns the surface's OpenAPI document (the generated GetSpec).
	Spec func() (*openapi3.T, error)
	// Tokens returns the surface's token table over q, judging expiry by now (the domain's
	// NewTokenStore).
	Tokens func(q *db.Queries, now func() time.Time) opaquetoken.Table[P]
	// TTL is the tokens' lifetime when Options.TokenTTL is 0.
	TTL time.Duration
	// Revoked is the channel on which PostgreSQL notifies the hash of every deleted token row.
	Revoked string
	// QueryParam, when not "", also takes the token from this query parameter (bearer.Options).
	QueryParam string
	// UserID names the user of a principal (bearer.Options.UserID); Role is the user's role in
	// the surface ("Customer", "admin"), for the token source.
	UserID, Role func(P) string
	// ClientAddr are the operations (by generated id) that count something per client address,
	// the failed logins and the registrations: only they get it (web.ClientAddrFor).
	ClientAddr []string
	// Unvalidated are the operations (by generated id) whose plainly well-formed requests skip the
	// spec validator, each with its test (router.Surface.Unvalidated); nil validates every request.
	Unvalidated map[string]func(*http.Request) bool
	// Checks are the domain's own field checks (router.Surface.Also).
	Checks web.FieldChecks
	// Refused answers an error an operation returned: the surface's refusal table
	// (refusal.Table.ResponseErrorHandler).
	Refused func(http.ResponseWriter, *http.Request, error)
	// DeviceCookie and DevicePath are the name and Path of the cookie the surface's password login
	// keeps a client's device token in (OWASP's device cookies): the login's path, so no other
	// request carries it. DeviceOps are the generated operations of that login (Device); the
	// edge's token endpoint (PasswordGrant, outside the strict server) carries it as well. Either
	// way the login (Edge.Login) reads the cookie and keeps a token through the request's context,
	// and the edge sets it on the answer.
	DeviceCookie, DevicePath string
	DeviceOps                []string
}

// Edge is the built edge of one surface, shared by its token endpoint, its operations and the
// server that mounts it.
type Edge[P any] struct {
	// Spec is the surface's OpenAPI document.
	Spec *openapi3.T
	// Tokens issues, resolves, revokes and sweeps the surface's access tokens.
	Tokens *opaquetoken.Tokens[P]
	// Guard runs every password login of the surface (busy hasher, failed-login limit).
	Guard *loginguard.Guard
	// Signups caps the registrations per client address.
	Signups *loginguard.Signups
	// Options are the options given, with the defaults filled in.
	Options Options

	s    Surface[P]
	auth *bearer.Authenticator[P]
	keys *idempotency.Keys
}

// New builds the edge of surface s on pool.
func New[P any](pool *pgxpool.Pool, s Surface[P], o Options) (*Edge[P], error) {
	if o.TokenTTL <= 0 {
		o.TokenTTL = s.TTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Hasher == nil {
		o.Hasher = password.New(password.Default)
	}
	spec, err := s.Spec()
	if err != nil {
		return nil, fmt.Errorf("%s spec: %w", s.Name, err)
	}
	// Every operation the edge is given by id is one of the spec's: a misspelt id would silently
	// turn its wiring off (a device cookie never read, a per-address count never made).
	if err := web.KnownOperations(spec, slices.Concat(s.ClientAddr, s.DeviceOps)...); err != nil {
		return nil, fmt.Errorf("%s edge: %w", s.Name, err)
	}
	table := s.Tokens(db.New(pool), o.Now)
	if o.Reads != nil {
		// A token is resolved where the reads go (pgread): the standby once it has replayed every
		// write acknowledged before the request (an issue or a revocation by any replica among
		// them), else the primary. So while the primary is away (a failover, a frozen primary),
		// when the revocation listener is down and nothing is cached, tokens still resolve and
		// reads are served from the standby instead of every request failing.
		table.Owner = func(ctx context.Context, hash []byte, now time.Time) (owner P, expires time.Time, err error) {
			err = o.Reads.Do(ctx, func(p *pgxpool.Pool) (err error) {
				owner, expires, err = s.Tokens(db.New(p), o.Now).Owner(ctx, hash, now)
				return err
			})
			return owner, expires, err
		}
	}
	tokens, err := opaquetoken.New[P](table,
		opaquetoken.Options{TTL: o.TokenTTL, CacheFor: opaquetoken.DefaultCacheFor, Now: o.Now})
	if err != nil {
		return nil, err
	}
	opaquetoken.Watch(o.Revocations, s.Revoked, tokens)
	e := &Edge[P]{
		Spec:    spec,
		Tokens:  tokens,
		Guard:   loginguard.New(o.Hasher, throttle.New(pool, o.Logins), domainerr.InvalidCredentials, o.Devices),
		Signups: loginguard.NewSignups(throttle.New(pool, loginguard.SignupOptions(o.Signups))),
		Options: o,
		s:       s,
		keys:    idempotency.New(pool, idempotency.Operations(spec), idempotency.Options{Log: o.Log, Hold: o.IdempotencyHold}),
	}
	e.auth = bearer.New(tokens.Resolve, bearer.Options[P]{
		Realm:      s.Name,
		Public:     bearer.PublicBySpec(spec),
		QueryParam: s.QueryParam,
		IsInvalid:  func(err error) bool { return errors.Is(err, opaquetoken.ErrInvalid) },
		UserID:     s.UserID,
	})
	return e, nil
}

// OptionsOf are the edge's options from the server's Deps, tokens living ttl (0: the surface's
// default).
func OptionsOf(d kit.Deps, ttl time.Duration) Options {
	o := Options{TokenTTL: ttl, Log: d.Log, Revocations: d.Revocations, Reads: d.Reads, Signups: d.Signups,
		IdempotencyHold: d.IdempotencyHold, Devices: d.Devices, SecureCookies: d.SecureCookies}
	if d.Hasher != nil {
		o.Hasher = d.Hasher()
	}
	if d.Logins != nil {
		o.Logins = d.Logins()
	}
	return o
}

// Serve puts the mounted surface's tokens to work in the server: they are the token source of the
// surface's name (kit.Sources), and the expired ones are swept hourly (they authenticate nobody
// already; the sweep keeps the table small).
func (e *Edge[P]) Serve(d kit.Deps) {
	d.Tokens.Provide(e.s.Name, e.Source())
	if d.Sweep != nil {
		d.Sweep(e.s.Name+" tokens", time.Hour, e.Tokens.Sweep)
	}
}

// Strict is what Mount hands the surface's mount of its generated strict server.
type Strict struct {
	// Options are the strict server's error handlers: convert them to the generated
	// StrictHTTPServerOptions (the two have the same fields).
	Options StrictOptions
	// BadParam answers a parameter the generated binder cannot read (ChiServerOptions.ErrorHandlerFunc).
	BadParam func(http.ResponseWriter, *http.Request, error)

	clientAddr []string
	device     http.Cookie
	deviceOps  []string
}

// StrictOptions has the fields of every generated StrictHTTPServerOptions.
type StrictOptions struct {
	RequestErrorHandlerFunc  func(w http.ResponseWriter, r *http.Request, err error)
	ResponseErrorHandlerFunc func(w http.ResponseWriter, r *http.Request, err error)
}

// ClientAddr is the generated strict middleware that hands the client address to the operations
// of Surface.ClientAddr (checked against the spec by New).
func ClientAddr[F web.StrictHandler](s Strict) func(F, string) F {
	return web.ClientAddrOps[F](s.clientAddr)
}

// Device is the generated strict middleware that carries the device cookie through the login
// operations of Surface.DeviceOps (web.DeviceCookieFor): the cookie presented reaches the
// operation (web.DeviceOf), and the token it keeps (web.KeepDevice) is set on its answer.
func Device[F web.StrictHandler](s Strict) func(F, string) F {
	return web.DeviceCookieFor[F](s.device, s.deviceOps...)
}

// deviceCookie is the surface's device cookie without its value: HttpOnly, SameSite Strict, Secure
// when Options.SecureCookies, host-only, for as long as a token handed out now is valid.
func (e *Edge[P]) deviceCookie() *http.Cookie {
	return &http.Cookie{Name: e.s.DeviceCookie, Path: e.s.DevicePath, MaxAge: int(e.Guard.DeviceTTL().Seconds()),
		HttpOnly: true, Secure: e.Options.SecureCookies, SameSite: http.SameSiteStrictMode}
}

// Mount registers the surface's operations on r in one group: the bearer check first (a caller
// without a valid token learns that before anything about its input, and nothing parses its
// body), then the Idempotency-Key store, then validation against the spec with the surface's own
// field checks; serve registers the generated strict server on the group.
func (e *Edge[P]) Mount(r chi.Router, serve func(g chi.Router, s Strict)) error {
	return router.Group(r, router.Surface{
		Spec:        e.Spec,
		Before:      []func(http.Handler) http.Handler{e.auth.Middleware},
		Idempotency: e.keys,
		Unvalidated: e.s.Unvalidated,
		Also:        e.s.Checks,
	}, func(g chi.Router) {
		serve(g, Strict{
			Options:    StrictOptions{RequestErrorHandlerFunc: web.StrictRequestError, ResponseErrorHandlerFunc: e.s.Refused},
			BadParam:   web.BadParam,
			clientAddr: e.s.ClientAddr,
			device:     *e.deviceCookie(),
			deviceOps:  e.s.DeviceOps,
		})
	})
}

// Source is the surface's tokens as the named token source of kit.Sources: a token resolves to a
// kit.Caller with the user's id and role, and an unknown, expired or revoked one is
// bearer.ErrInvalid.
func (e *Edge[P]) Source() kit.Resolver {
	return func(ctx context.Context, tok string) (kit.Caller, error) {
		p, err := e.Tokens.Resolve(ctx, tok)
		if errors.Is(err, opaquetoken.ErrInvalid) {
			return kit.Caller{}, bearer.ErrInvalid
		}
		if err != nil {
			return kit.Caller{}, err
		}
		return kit.Caller{Source: e.s.Name, UserID: e.s.UserID(p), Role: e.s.Role(p)}, nil
	}
}

// Principal is the caller the bearer check authenticated (the zero P on a public operation).
func Principal[P any](ctx context.Context) P {
	p, _ := bearer.From[P](ctx)
	return p
}
