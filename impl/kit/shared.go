package kit

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// Logins tune what every surface with passwords shares: the failed-login limit's per-address and
// per-account layers, the hasher's per-client line and the registration cap per client address.
type Logins struct {
	// AddressMax is the failed logins from one client address per window, over all accounts,
	// before its checks are slowed (throttle.Options.AddressMax).
	AddressMax int
	// AccountMax is the failed logins at one account per window, over all addresses, before it is
	// refused to all but its devices (throttle.Options.AccountMax).
	AccountMax int
	// AddressInterval is the spacing of a slowed address's password checks.
	AddressInterval time.Duration
	// ClientQueue is the hashes of one client that may wait for its share of the hasher.
	ClientQueue int
	// SignupMax registrations per client address per SignupWindow, per surface.
	SignupMax    int
	SignupWindow time.Duration
}

// DefaultLogins are the packages' defaults (throttle, password, loginguard).
func DefaultLogins() Logins {
	return Logins{AddressMax: throttle.DefaultAddressMax, AccountMax: throttle.DefaultAccountMax,
		AddressInterval: throttle.DefaultAddressInterval, ClientQueue: password.DefaultClientLine,
		SignupMax: loginguard.DefaultSignupMax, SignupWindow: loginguard.DefaultSignupWindow}
}

// Shared is what one server shares among its surfaces, from which each surface's Deps are made
// (Deps): the database, the metrics, the token sources and revocations, the login settings, and
// what runs until the server stops. The server fills the fields, calls NewShared, mounts each
// surface with Deps(name), and calls Close when it stops.
type Shared struct {
	Pool   *pgxpool.Pool
	Reads  *pgread.Reader
	Direct *pgx.ConnConfig
	// Log is the server's logger; each surface's is this one naming the surface.
	Log     *slog.Logger
	Metrics *metrics.Registry
	Dev     bool
	Logins  Logins
	// DeviceKey keys the device tokens of every surface's password logins (each surface signs
	// under a key derived from it, device.NewSigner): a secret every replica shares.
	DeviceKey []byte
	// SecureCookies marks the surfaces' cookies Secure.
	SecureCookies bool
	// IdempotencyHold is Deps.IdempotencyHold: tests only; nil in production.
	IdempotencyHold func(ctx context.Context, point string)
	// DevReset is Deps.DevReset: dev mode's POST /dev/reset; nil in every other mode.
	DevReset func(name string, reset func(context.Context) error)

	// Revocations and Tokens are made by NewShared: the process's one listening session for
	// token revocations (its Start is the server's, once every surface is mounted), and the token
	// sources by name (the server seals them once every surface is mounted).
	Revocations *opaquetoken.Watcher
	Tokens      *Sources
	// Sweeper runs every sweep of the server (Deps.Sweep, SweepSharedTables) on one replica at a
	// time, the lease's holder, counting its runs in the metrics (made by NewShared).
	Sweeper *sweep.Leader

	closers []func()
}

// NewShared completes s with the revocation watcher (over Direct, falling back to Pool) and an
// empty set of token sources.
func NewShared(s Shared) *Shared {
	s.Revocations = opaquetoken.NewSessionWatcher(s.Direct, s.Pool, s.Log)
	s.Tokens = NewSources()
	var obs sweep.Observer
	if s.Metrics != nil {
		obs = s.Metrics
	}
	s.Sweeper = sweep.NewLeader(s.Pool, obs)
	return &s
}

// OnClose registers f to run at Close, after the HTTP server has stopped.
func (s *Shared) OnClose(f func()) { s.closers = append(s.closers, f) }

// Close runs what OnClose registered, the last first.
func (s *Shared) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// Deps are what the server hands the surface name: the database, its logger, the token sources,
// and the shared machinery (the password hasher, whose queue the metrics watch, with
// Logins.ClientQueue; the failed-login limit, whose refusals the metrics count; the registration
// cap; background sweeps stopped at Close).
func (s *Shared) Deps(name string) Deps {
	l := s.Logins
	return Deps{
		Pool: s.Pool, Log: s.Log.With("surface", name), Tokens: s.Tokens, Dev: s.Dev,
		Revocations: s.Revocations, Reads: s.Reads, Direct: s.Direct,
		Hasher: func() *password.Hasher {
			h := password.New(password.Default)
			h.SetClientLine(l.ClientQueue)
			s.Metrics.WatchHashQueue(name, h.Waiting)
			return h
		},
		Logins: func() throttle.Options {
			return throttle.Options{AddressMax: l.AddressMax, AccountMax: l.AccountMax, AddressInterval: l.AddressInterval, OnBlocked: s.Metrics.LoginRefused(name)}
		},
		Signups: throttle.Options{Max: l.SignupMax, Window: l.SignupWindow},
		// Each surface's device tokens are signed under a key of its own derived from DeviceKey,
		// so the secret itself signs nothing and one surface's token is nothing on another.
		Devices:         device.NewSigner(s.DeviceKey, name, 0, nil),
		SecureCookies:   s.SecureCookies,
		IdempotencyHold: s.IdempotencyHold,
		Sweep:           s.startSweep,
		OnClose:         s.OnClose,
		Metrics:         s.Metrics,
		DevReset:        s.DevReset,
	}
}

// SweepSharedTables starts the sweeps of the tables the surfaces share, until Close: the expired
// Idempotency-Key rows hourly, as the tokens' (the surfaces that take the header keep them:
// impl/kit/idempotency), and the login_throttle rows whose window ended, for every limiter over
// the table (the surfaces' failed logins and sign-ups, the auth confirmation limits).
func (s *Shared) SweepSharedTables() {
	s.startSweep("idempotency keys", time.Hour, idempotency.New(s.Pool, nil, idempotency.Options{}).Sweep)
	s.startSweep("login throttles", throttle.SweepEvery, throttle.New(s.Pool, throttle.Options{}).Sweep)
}

// startSweep runs f every interval until Close, on the replica that holds its lease. The lease
// lasts an interval and a half: the leader's next tick renews it in time, and a dead leader's
// sweep moves to another replica within one and a half intervals. The leader's runs are counted
// and its last success timed in the metrics under what (metrics.Registry.Swept).
func (s *Shared) startSweep(what string, every time.Duration, f func(context.Context) (int64, error)) {
	s.OnClose(sweep.Start(s.Log, what, every, s.Sweeper.Wrap(what, every*3/2, f)))
}
