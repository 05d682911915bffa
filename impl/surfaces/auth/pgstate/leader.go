package pgstate

import (
	"context"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/authstatedb"
	"github.com/triadhq/triad/impl/platform/pgsession"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// DefaultLeaderInterval is how often a Leader tries to take the lock, and how often the holder
// checks that its connection (and so its lock) is still alive: a replica takes over a dead poller's
// work within about this long once PostgreSQL has ended the dead one's session.
const DefaultLeaderInterval = time.Second

// Leader is a provider.Leader elected through a PostgreSQL session-level advisory lock, held on a
// connection of its own (never a pooled one, which would carry the lock to unrelated work). The
// lock lives exactly as long as that session: a process that dies, or whose connection drops,
// loses it, and the next try of another process takes it. The session carries pgsession's
// keepalives, so PostgreSQL ends a silently dead host's session (and frees its lock) within
// seconds; the holder's own ping (each Interval, with Interval as its deadline) makes it step down
// first, so two pollers never overlap.
type Leader struct {
	conn *pgx.ConnConfig
	key  int64
	// Interval overrides DefaultLeaderInterval.
	Interval time.Duration
	// Log receives elections and connection failures; nil discards them.
	Log *slog.Logger
}

var _ provider.Leader = (*Leader)(nil)

// NewLeader returns the Leader for one job name (e.g. "telegram:<bot>"): processes contending for
// the same name elect one; different names do not interfere. Connections are made with pool's
// configuration.
func NewLeader(pool *pgxpool.Pool, name string) *Leader {
	return NewLeaderConfig(pool.Config().ConnConfig, name)
}

// NewLeaderConfig is NewLeader whose connections are made with direct, a connection straight to
// PostgreSQL: a session-level lock taken through a transaction-mode pooler stays on whichever
// server connection ran it, and every process would then elect itself.
func NewLeaderConfig(direct *pgx.ConnConfig, name string) *Leader {
	h := fnv.New64a()
	_, _ = h.Write([]byte("triad-auth-leader:" + name))
	return &Leader{conn: direct, key: int64(h.Sum64())}
}

func (l *Leader) interval() time.Duration {
	if l.Interval > 0 {
		return l.Interval
	}
	return DefaultLeaderInterval
}

func (l *Leader) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Lead blocks until ctx ends, running fn whenever this process holds the lock; fn's context ends
// as soon as the lock may have been lost (the connection failed its check).
func (l *Leader) Lead(ctx context.Context, fn func(context.Context)) {
	t := time.NewTicker(l.interval())
	defer t.Stop()
	for ctx.Err() == nil {
		l.term(ctx, t, fn)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// term connects, waits for the lock, runs fn while the connection stays alive, and closes the
// connection (releasing the lock) when anything fails or ctx ends.
func (l *Leader) term(ctx context.Context, t *time.Ticker, fn func(context.Context)) {
	conn, err := pgsession.Connect(ctx, pgsession.ConfigFrom(l.conn, ""), nil)
	if err != nil {
		if ctx.Err() == nil {
			l.log().Warn("auth: leader election: connect", "err", err)
		}
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	for {
		got, err := authstatedb.New(conn).TryAdvisoryLock(ctx, l.key)
		if err != nil {
			if ctx.Err() == nil {
				l.log().Warn("auth: leader election: try lock", "err", err)
			}
			return
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	l.log().Info("auth: elected leader", "key", l.key)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(lctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-t.C:
		}
		// The check is a query for the lock itself rather than a bare ping: through a
		// transaction-mode pooler it may run on another server connection than the one that took
		// the lock, which then shows as not held here, and the leader steps down saying why.
		pctx, pcancel := context.WithTimeout(ctx, l.interval())
		held, err := authstatedb.New(conn).HoldsAdvisoryLock(pctx, l.key)
		pcancel()
		if err != nil {
			if ctx.Err() == nil {
				l.log().Warn("auth: leader lost its connection, stepping down", "err", err)
			}
			return
		}
		if !held {
			l.log().Error("auth: leader's lock is not held by its own session, stepping down: its connection goes through a transaction-mode pooler; give it a direct connection to PostgreSQL (DATABASE_DIRECT_URL)")
			return
		}
	}
}
