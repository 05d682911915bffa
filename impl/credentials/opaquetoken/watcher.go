package opaquetoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/pgsession"
)

// Timings of a Watcher's session.
const (
	// watchPingEvery is how long the session may stay silent before the Watcher pings it. A
	// connection that died without a word (a cut network) is noticed within about watchPingEvery
	// plus watchPingTimeout; until then this process may miss a revocation, the one window where a
	// revoked token can still be served from its cache.
	watchPingEvery   = 2 * time.Second
	watchPingTimeout = 2 * time.Second
	// watchSetupTimeout bounds the LISTEN statements of a new session.
	watchSetupTimeout = 10 * time.Second
	// watchBackoffMin and watchBackoffMax bound the wait between reconnects, doubling while they
	// fail: a restarting server is found again within seconds, a dead one is not hammered.
	watchBackoffMin = 100 * time.Millisecond
	watchBackoffMax = 3 * time.Second
	// watchProbeTimeout bounds the wait for a new session's probe notification. It travels from
	// the pool to the session through one PostgreSQL server, so it takes milliseconds; a session
	// behind a transaction-mode pooler never hears it.
	watchProbeTimeout = 3 * time.Second
	// watchDeafRetry is the wait before a session that heard nothing is tried again: the
	// configuration, not the network, is wrong, so retrying quickly would change nothing.
	watchDeafRetry = 30 * time.Second
	// watchLogEvery rate-limits the lines of an outage: one when the session fails, then at most
	// one this often while reconnecting fails, and one when it is back.
	watchLogEvery = 30 * time.Second
)

// revocable is what a Watcher keeps true to the database: a Tokens of any owner type.
type revocable interface {
	drop(hash [sha256.Size]byte)
	flush()
	setLive(live bool)
}

// Watcher relays the database's token revocations to the caches of one process. It holds one
// PostgreSQL session of its own (not a pooled connection: LISTEN belongs to a session), LISTENs on
// the channel of every Tokens registered with Watch, and drops each hash a notification names
// (db/schema/00100_token_revocation_notify.sql: deleting a token row notifies its hash on commit).
// A Tokens caches only while its channel is being listened to: when the session fails, every cache
// is emptied and stops filling (each Resolve asks the store, correct but slower) until the Watcher
// has reconnected and LISTENs again. One Watcher serves every surface of a process.
type Watcher struct {
	dial func(context.Context) (*pgx.Conn, error)
	// notify sends a notification by another way than the session (the pool): a new session
	// must hear its probe before any cache fills (see verify).
	notify func(ctx context.Context, channel, payload string) error
	probe  string // the channel of this Watcher's probes
	log    *slog.Logger
	// Tests change these.
	pingEvery, backoffMin, backoffMax, deafRetry time.Duration

	wake chan struct{} // a Watch while a session is up: LISTEN on its channel

	mu       sync.Mutex
	channels map[string][]revocable
	listened map[string]bool // channels the current session listens on; nil between sessions
}

// WatcherApplicationName is appended to the application_name of the Watcher's session, so that
// operators (and tests) can find it in pg_stat_activity.
const WatcherApplicationName = "token revocations"

// NewWatcher returns a Watcher whose session is made with pool's configuration (its URL, with the
// keepalives of pgsession.Config). log receives its outages; nil discards them.
func NewWatcher(pool *pgxpool.Pool, log *slog.Logger) *Watcher {
	return NewSessionWatcher(pool.Config().ConnConfig, pool, log)
}

// NewSessionWatcher returns a Watcher whose session is made with direct (a connection straight to
// PostgreSQL, with the keepalives of pgsession.ConfigFrom), while its probes are sent through
// pool, which may be a transaction-mode pooler. log receives its outages; nil discards them.
func NewSessionWatcher(direct *pgx.ConnConfig, pool *pgxpool.Pool, log *slog.Logger) *Watcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cc := pgsession.ConfigFrom(direct, WatcherApplicationName)
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &Watcher{
		dial: func(ctx context.Context) (*pgx.Conn, error) {
			return pgsession.Connect(ctx, cc, func(err error) {
				log.Warn("token revocations: the database refused the session's keepalives, connecting without them (a pooler?)", "err", err)
			})
		},
		notify: func(ctx context.Context, channel, payload string) error {
			_, err := pool.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload)
			return err
		},
		probe:      "triad_watch_probe_" + hex.EncodeToString(nonce[:]),
		log:        log,
		pingEvery:  watchPingEvery,
		backoffMin: watchBackoffMin,
		backoffMax: watchBackoffMax,
		deafRetry:  watchDeafRetry,
		wake:       make(chan struct{}, 1),
		channels:   map[string][]revocable{},
	}
}

// Watch registers tokens for the revocations notified on channel (the surface's table's trigger
// names it). It may be called before or while the Watcher runs; tokens starts caching once its
// channel is listened to. A nil Watcher watches nothing, so tokens never caches.
func Watch[Owner any](w *Watcher, channel string, tokens *Tokens[Owner]) {
	if w != nil {
		w.watch(channel, tokens)
	}
}

// Cache is a cache outside this package that a Watcher keeps true to the database, as it keeps a
// Tokens: Drop for each hash notified on its channel (64 hex digits of a SHA-256), Flush for '*',
// and SetLive(false) whenever a notification may have been missed (the session failed), then
// SetLive(true) once its channel is listened to again. The Watcher calls them under its own lock:
// they must return at once, and not call the Watcher.
type Cache interface {
	Drop(hash [sha256.Size]byte)
	Flush()
	SetLive(live bool)
}

// WatchCache registers c for the notifications of channel, like Watch for a Tokens (the auth
// library's revoked sessions use it, so one session per process listens for both). A nil Watcher
// watches nothing: c is never live.
func WatchCache(w *Watcher, channel string, c Cache) {
	if w != nil {
		w.watch(channel, cacheOf{c})
	}
}

// cacheOf adapts a Cache to revocable.
type cacheOf struct{ c Cache }

func (a cacheOf) drop(hash [sha256.Size]byte) { a.c.Drop(hash) }
func (a cacheOf) flush()                      { a.c.Flush() }
func (a cacheOf) setLive(live bool)           { a.c.SetLive(live) }

func (w *Watcher) watch(channel string, c revocable) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.channels[channel] = append(w.channels[channel], c)
	if w.listened[channel] {
		// Every notification from now on reaches c; one before found c's cache empty.
		c.setLive(true)
		return
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Listening reports whether the Watcher is connected and listens on every registered channel, so
// that every registered Tokens caches.
func (w *Watcher) Listening() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.listensOnAll()
}

// listensOnAll reports whether a session is up and listens on every registered channel; w.mu
// must be held.
func (w *Watcher) listensOnAll() bool {
	if w.listened == nil {
		return false
	}
	for ch := range w.channels {
		if !w.listened[ch] {
			return false
		}
	}
	return true
}

// WaitListening waits until Listening or ctx ends (tests, and a start-up that wants the cache from
// its first request).
func (w *Watcher) WaitListening(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !w.Listening() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Start runs the Watcher in a goroutine until the returned stop is called; stop waits until its
// session is closed.
func (w *Watcher) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// Run keeps a session listening until ctx ends, reconnecting with backoff after any failure.
func (w *Watcher) Run(ctx context.Context) {
	backoff := w.backoffMin
	var downSince, lastLog time.Time
	failures := 0
	for ctx.Err() == nil {
		wasUp, err := w.session(ctx)
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if errors.Is(err, ErrDeaf) {
			if lastLog.IsZero() || now.Sub(lastLog) >= watchLogEvery {
				lastLog = now
				w.log.Warn("token revocations: LISTEN hears nothing on this connection; tokens are not cached, every request asks the database (revocations hold at once, at a query per request); give the listener a direct connection to PostgreSQL (DATABASE_DIRECT_URL)", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(w.deafRetry):
			}
			continue
		}
		if wasUp {
			backoff = w.backoffMin
			downSince, failures = now, 0
			lastLog = now
			w.log.Warn("token revocations: lost the listening session; tokens are not cached, every request asks the database, until it is back", "err", err)
		} else {
			failures++
			if downSince.IsZero() {
				downSince = now
			}
			if lastLog.IsZero() || now.Sub(lastLog) >= watchLogEvery {
				lastLog = now
				w.log.Warn("token revocations: cannot listen; tokens are not cached, every request asks the database", "attempts", failures, "down_for", now.Sub(downSince).Round(time.Second), "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, w.backoffMax)
	}
}

// session connects, listens and relays notifications until the connection fails or ctx ends. up
// reports whether it listened on every channel at some point (the next failure starts an outage).
func (w *Watcher) session(ctx context.Context) (up bool, err error) {
	conn, err := w.dial(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		w.down()
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if err := w.verify(ctx, conn); err != nil {
		return false, err
	}
	w.mu.Lock()
	w.listened = map[string]bool{}
	w.mu.Unlock()
	for {
		was := up
		if up, err = w.listen(ctx, conn); err != nil {
			return was, err
		}
		if up && !was {
			w.log.Info("token revocations: listening", "channels", len(w.listened))
		}
		// Wait for a notification, a Watch (wake) or the time to ping, whichever comes first. A
		// timeout leaves a pgx connection usable; a failed read closes it.
		wctx, cancel := context.WithTimeout(ctx, w.pingEvery)
		go func() {
			select {
			case <-w.wake:
				cancel()
			case <-wctx.Done():
			}
		}()
		n, err := conn.WaitForNotification(wctx)
		timedOut := errors.Is(wctx.Err(), context.DeadlineExceeded)
		woken := wctx.Err() != nil
		cancel()
		if n != nil {
			w.route(n)
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return up, nil
		case !woken || conn.IsClosed():
			return up, err
		case timedOut:
			pctx, pcancel := context.WithTimeout(ctx, watchPingTimeout)
			err = conn.Ping(pctx)
			pcancel()
			if err != nil {
				return up, err
			}
		}
	}
}

// listen LISTENs on the registered channels the session does not listen on yet, makes their
// Tokens live, and reports whether the session now listens on every channel.
func (w *Watcher) listen(ctx context.Context, conn *pgx.Conn) (bool, error) {
	w.mu.Lock()
	var todo []string
	for ch := range w.channels {
		if !w.listened[ch] {
			todo = append(todo, ch)
		}
	}
	w.mu.Unlock()
	if len(todo) > 0 {
		lctx, cancel := context.WithTimeout(ctx, watchSetupTimeout)
		defer cancel()
		for _, ch := range todo {
			if _, err := conn.Exec(lctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				return false, err
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range todo {
		w.listened[ch] = true
		for _, c := range w.channels[ch] {
			c.setLive(true)
		}
	}
	return w.listensOnAll(), nil
}

// down ends a session: every cache empties and stops filling, as a revocation may be missed now.
func (w *Watcher) down() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listened = nil
	for _, cs := range w.channels {
		for _, c := range cs {
			c.setLive(false)
		}
	}
}

// route drops the token a notification names from the caches of its channel; '*' (the table was
// truncated) empties them.
func (w *Watcher) route(n *pgconn.Notification) {
	var hash [sha256.Size]byte
	all := n.Payload == "*"
	if !all {
		if len(n.Payload) != 2*sha256.Size {
			w.log.Debug("token revocations: ignored a malformed notification", "channel", n.Channel, "payload", n.Payload)
			return
		}
		if _, err := hex.Decode(hash[:], []byte(n.Payload)); err != nil {
			w.log.Debug("token revocations: ignored a malformed notification", "channel", n.Channel, "payload", n.Payload)
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.channels[n.Channel] {
		if all {
			c.flush()
		} else {
			c.drop(hash)
		}
	}
}
