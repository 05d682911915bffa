// Package kit is what a surface gets from the server: the database, the logger, the credentials
// it accepts and the server's shared machinery (Deps), named rather than reached for. Every
// surface is mounted the same way, by a Mount (a function of Deps and the root router): orders,
// brands and auth make theirs from their own settings, and a surface scaffolded by
// `make new-surface` exports one, registered by one line in cmd/server (docs/adding-a-surface.md).
// The server makes each surface's Deps from what it shares among them (Shared).
package kit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/platform/pgread"
)

// Deps are what the server hands a surface when it mounts it: every surface, orders, brands, auth
// and the scaffolded ones, is mounted with them alike (a Mount), and takes what it uses.
type Deps struct {
	// Pool is the server's database (the migrations in db/schema have run).
	Pool *pgxpool.Pool
	// Log is the surface's logger for what happens outside a request (start-up, background work);
	// a request that fails is logged by web.Internal on the request's logger (router.Options.Log).
	Log *slog.Logger
	// Tokens are the server's token sources, by name.
	Tokens *Sources
	// Dev is the server's dev mode: a surface loads its demo data.
	Dev bool
	// Revocations relays the database's token revocations to the surfaces' caches: the process's
	// one listening session (opaquetoken.Watcher); nil caches nothing.
	Revocations *opaquetoken.Watcher
	// Reads sends the reads that tolerate a standby's lag to a standby with the caller's writes
	// (pgread); nil reads them from Pool.
	Reads *pgread.Reader
	// Direct makes the sessions that must not go through a pooler (a session-level advisory lock's);
	// nil uses Pool's configuration.
	Direct *pgx.ConnConfig
	// Hasher returns the surface's own password hasher, made by the server on the first call (so
	// a surface that hashes nothing has none); nil means each surface's default.
	Hasher func() *password.Hasher
	// Logins returns the settings of the surface's failed-login limit (throttle.Options); nil
	// means throttle's defaults.
	Logins func() throttle.Options
	// Signups are the settings of the registration cap per client address.
	Signups throttle.Options
	// Devices signs the device tokens of the surface's password logins (OWASP's device cookies,
	// impl/credentials/device), under a key of the surface's own; nil hands out none.
	Devices *device.Signer
	// SecureCookies marks the surface's cookies Secure (the site is served over https).
	SecureCookies bool
	// IdempotencyHold is idempotency.Options.Hold: tests only; nil in production.
	IdempotencyHold func(ctx context.Context, point string)
	// Sweep runs f every interval until the server stops, logging its failures (background work
	// such as deleting expired rows); nil runs nothing.
	Sweep func(name string, every time.Duration, f func(context.Context) (int64, error))
	// OnClose registers f to run when the server stops; nil never runs it.
	OnClose func(f func())
	// Metrics are the server's metrics, on which a surface counts its business events
	// (Metrics.Events); nil counts nothing.
	Metrics *metrics.Registry
	// DevReset registers, in dev mode, how the surface puts its demo data back as at the first
	// start: the server's POST /dev/reset runs every one registered, in mount order (docs/specs.md:
	// Swagger UI). Nil outside dev mode, where no such path exists.
	DevReset func(name string, reset func(context.Context) error)
}

// Mount registers one surface on the root router with the server's Deps. Every surface exports
// one (a function, or one made from the surface's own settings).
type Mount func(Deps, chi.Router) error

// Caller is who an access token names, whatever source issued it.
type Caller struct {
	// Source is the token source's name ("orders", "brands", "auth": the auth service's JWT).
	Source string
	// UserID is the user's id in that source: two sources' ids are different users.
	UserID string
	// Role is the source's role of the user ("Customer", "Performer", "admin", "user").
	Role string
}

// Resolver resolves a presented token into its Caller, or an error matching bearer.ErrInvalid when
// the token authenticates nobody (bearer.Middleware's default).
type Resolver = bearer.Resolver[Caller]

// Sources are the token sources of one server, by name: a surface that issues tokens provides its
// own (orders, brands), and a surface that accepts them uses one by name. A name is resolved once
// every surface is mounted (Seal), so no surface depends on the order surfaces are mounted in, and
// a name nobody provides stops the server at start-up instead of refusing every request.
type Sources struct {
	mu       sync.Mutex
	provided map[string]Resolver
	used     map[string][]string // name → the surfaces using it
	sealed   bool
	// frozen is provided as Seal left it: what the resolvers read, without a lock.
	frozen atomic.Pointer[map[string]Resolver]
}

// NewSources returns an empty set of sources.
func NewSources() *Sources {
	return &Sources{provided: map[string]Resolver{}, used: map[string][]string{}}
}

// Provide registers the source name. Providing a name twice, or after Seal, is a wiring mistake
// and panics.
func (s *Sources) Provide(name string, r Resolver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed {
		panic("kit: token source " + name + " provided after the surfaces were mounted")
	}
	if _, dup := s.provided[name]; dup {
		panic("kit: token source " + name + " provided twice")
	}
	s.provided[name] = r
}

// errNotSealed is what a source answers when a request arrives before the server has sealed its
// sources (only a test that skips Seal sees it).
var errNotSealed = errors.New("kit: token sources used before Seal")

// Use returns the resolver of source name for surface user. The source may be provided later
// (by a surface mounted after user); Seal checks that it is.
func (s *Sources) Use(user, name string) Resolver {
	s.mu.Lock()
	s.used[name] = append(s.used[name], user)
	s.mu.Unlock()
	return func(ctx context.Context, tok string) (Caller, error) {
		m := s.frozen.Load()
		if m == nil {
			return Caller{}, errNotSealed
		}
		return (*m)[name](ctx, tok)
	}
}

// Seal ends the providing: it fails, naming them, when a source used is provided by no surface.
func (s *Sources) Seal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealed = true
	s.frozen.Store(&s.provided)
	var missing []string
	for name, users := range s.used {
		if _, ok := s.provided[name]; !ok {
			missing = append(missing, fmt.Sprintf("%q (used by %s)", name, strings.Join(users, ", ")))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	have := make([]string, 0, len(s.provided))
	for name := range s.provided {
		have = append(have, name)
	}
	slices.Sort(have)
	return fmt.Errorf("no surface provides the token source %s; provided: %s", strings.Join(missing, ", "), strings.Join(have, ", "))
}
