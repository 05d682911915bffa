// Package pgshared hands the auth library the state its replicas share through PostgreSQL, as
// triad runs it: pgstate's stores (used confirmation ids, pending messenger logins, revoked
// sessions, the poller election and the poller's offset) and the limits counted in triad's
// login_throttle table (the failed-login guard every password login runs, the bound on
// confirmation messages). Its options
// are plain values; the server reads them from its configuration. pgstate alone is what an
// embedder without triad's migrations uses: this package needs the login_throttle table too.
package pgshared

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/sessions"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
)

// Options configure the shared state.
type Options struct {
	// Direct makes the poller election's session: its advisory lock needs a connection straight to
	// PostgreSQL, never a pooled one.
	Direct *pgx.ConnConfig
	// Log receives the election's lines; nil discards them.
	Log *slog.Logger
	// Logins are the failed-login limit's settings, as for orders and brands.
	Logins throttle.Options
	// ConfirmPerRecipient, ConfirmPerClient and ConfirmWindow bound the verified provider's
	// confirmation messages: so many to one recipient, so many asked by one client address, in
	// each window.
	ConfirmPerRecipient, ConfirmPerClient int
	ConfirmWindow                         time.Duration
	// Devices signs the device tokens of direct logins and basic auth (loginlimit.DeviceCookie:
	// OWASP's device cookies); nil hands out none.
	Devices *device.Signer
	// DeviceAccounts binds those tokens to the account's id and credential version (device.Lookup,
	// loginguard.Guard.BindDevices): a token issued before the password changed, or to another
	// account of the name, is a stranger's. nil binds them to the account's name alone.
	DeviceAccounts device.Lookup
	// Sessions are the sessions revoked by logout (pgstate.NewSessions); nil keeps the library's
	// in-memory store.
	Sessions *pgstate.Sessions
}

// State is the auth state every replica shares through PostgreSQL. A nil *State keeps each part
// in process memory (the library's defaults: unit tests of the wiring).
type State struct {
	store *pgstate.Store
	pool  *pgxpool.Pool
	o     Options
}

// New returns the shared state over store (pgstate.Open or New) and pool.
func New(pool *pgxpool.Pool, store *pgstate.Store, o Options) *State {
	return &State{store: store, pool: pool, o: o}
}

// UsedIDs is the store of used confirmation ids; nil means the library's in-memory default.
func (s *State) UsedIDs() provider.UsedIDs {
	if s == nil {
		return nil
	}
	return s.store
}

// SendLimiter bounds confirmation messages in the database; nil means the library's in-memory one.
func (s *State) SendLimiter() provider.SendLimiter {
	if s == nil {
		return nil
	}
	return &sendLimiter{
		recipients: throttle.New(s.pool, throttle.Options{Max: s.o.ConfirmPerRecipient, Window: s.o.ConfirmWindow}),
		clients:    throttle.New(s.pool, throttle.Options{Max: s.o.ConfirmPerClient, Window: s.o.ConfirmWindow}),
	}
}

// Sessions is the store of revoked sessions; nil means the library's in-memory one.
func (s *State) Sessions() sessions.Store {
	if s == nil || s.o.Sessions == nil {
		return nil
	}
	return s.o.Sessions
}

// LoginGuard is the failed-login limit of direct logins and basic auth: the one guard orders and
// brands run (impl/credentials/loginguard), over the same table, so the rules, the count and the
// 429 are the same on every surface and every replica; nil means the library's in-memory one. The
// auth surface hashes nothing itself (the checks are the embedder's or a constant-time compare),
// so the guard has no hasher to admit logins to.
func (s *State) LoginGuard() loginlimit.Guard {
	if s == nil {
		return nil
	}
	g := loginguard.New(nil, throttle.New(s.pool, s.o.Logins), loginlimit.ErrBadCredentials, s.o.Devices)
	if s.o.DeviceAccounts != nil {
		g.BindDevices(s.o.DeviceAccounts)
	}
	return g
}

// Telegram returns the pending-login store, the poller election and the store of the poller's
// offset of one bot; nils mean the library's single-process defaults.
func (s *State) Telegram(botToken string) (provider.TelegramLogins, provider.Leader, telegram.Offsets) {
	if s == nil {
		return nil, nil, nil
	}
	// The bot id (before the ':' of the token) names the election: replicas polling the same bot
	// contend, different bots do not, and the secret part of the token stays out of it.
	botID, _, _ := strings.Cut(botToken, ":")
	l := pgstate.NewLeaderConfig(s.o.Direct, "telegram:"+botID)
	l.Log = s.o.Log
	return s.store, l, s.store
}

// sendLimiter is the verified provider's provider.SendLimiter in the database: the messages are
// counted in the login throttle's table (under keys of their own, which no login key can equal),
// so every replica counts against the same bounds.
type sendLimiter struct {
	recipients, clients *throttle.Limiter
}

// Allow counts the message under its recipient, then under its client. The recipient comes first
// and is given back when the client is over its share: a client refused for asking too much then
// takes nothing of its victims' allowance.
func (l *sendLimiter) Allow(ctx context.Context, recipient, client string) (time.Duration, error) {
	to, err := l.recipients.Reserve(ctx, "CONFIRM-TO|"+provider.RecipientKey(recipient))
	if err != nil || to.Blocked {
		return to.RetryAfter, err
	}
	from, err := l.clients.Reserve(ctx, "CONFIRM-FROM|"+provider.ClientKey(client))
	if err != nil || from.Blocked {
		_ = to.Release()
		return from.RetryAfter, err
	}
	return 0, nil
}
