package pgstate

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/authstatedb"
	"github.com/triadhq/triad/impl/platform/sweep"
	"github.com/triadhq/triad/impl/surfaces/auth/sessions"
)

// SessionsSchema is the table of revoked sessions (Sessions), sessions_schema.sql.
//
//go:embed sessions_schema.sql
var SessionsSchema string

// SessionsChannel is the LISTEN/NOTIFY channel a revocation is announced on, with the hash in hex.
const SessionsChannel = "auth_sessions_revoked"

// Timings of Sessions.
const (
	// SessionsPollEvery is how often Sessions reads new revocations while it is not told of them
	// (no listener, or the listener's session is down): the longest another replica's revocation
	// takes to reach this one then.
	SessionsPollEvery = 500 * time.Millisecond
	// sessionsPollMargin re-reads revocations this much older than the newest seen, so one that
	// committed after a read but carries an earlier time is not missed.
	sessionsPollMargin = 5 * time.Second
	// sessionsNotifiedFor is how long a revocation heard of only by notification (which carries no
	// expiry) is kept: the longest cookie lifetime the library defaults to, plus a day.
	sessionsNotifiedFor = 32 * 24 * time.Hour
)

// Sessions is the PostgreSQL sessions.Store: a revocation is a row, and every process keeps the
// revoked hashes in memory, so Revoked is a map lookup. It learns other processes' revocations by
// notification on SessionsChannel (register it with opaquetoken.WatchCache on the process's token
// Watcher: it implements opaquetoken.Cache) and, whenever that is not live, by reading new rows every
// SessionsPollEvery; when the listener comes back it reads once more, for what it missed. Either
// way a revocation reaches every replica within about a second. Run (or Start) must be running.
type Sessions struct {
	pool *pgxpool.Pool
	q    *authstatedb.Queries
	log  *slog.Logger

	live atomic.Bool
	kick chan struct{} // read now (the listener is back)
	// size is len(revoked), so Revoked skips the hash while nothing is revoked.
	size atomic.Int64

	mu      sync.RWMutex
	revoked map[[sha256.Size]byte]time.Time
}

var _ sessions.Store = (*Sessions)(nil)

// NewSessions returns the Store over the auth_revoked_sessions table of pool's database
// (SessionsSchema: New creates it, the reference server's migrations do); log receives read
// failures (nil discards them).
func NewSessions(pool *pgxpool.Pool, log *slog.Logger) *Sessions {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sessions{pool: pool, q: authstatedb.New(pool), log: log, kick: make(chan struct{}, 1), revoked: map[[sha256.Size]byte]time.Time{}}
}

func sessionHash(id string) [sha256.Size]byte { return sha256.Sum256([]byte(id)) }

// Revoke implements sessions.Store: the row and its notification commit together, and this process
// knows at once.
func (s *Sessions) Revoke(ctx context.Context, id string, until time.Time) error {
	h := sessionHash(id)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.RevokeSession(ctx, authstatedb.RevokeSessionParams{Hash: h[:], ExpiresAt: until}); err != nil {
			return err
		}
		return q.NotifySessionRevoked(ctx, authstatedb.NotifySessionRevokedParams{Channel: SessionsChannel, Payload: hex.EncodeToString(h[:])})
	})
	if err != nil {
		return fmt.Errorf("pgstate: revoke a session: %w", err)
	}
	s.add(h, until)
	return nil
}

// Revoked implements sessions.Store from memory: a SHA-256 of the id (about 75 ns) and a map
// lookup, nothing at all while no session is revoked.
func (s *Sessions) Revoked(id string) bool {
	if s.size.Load() == 0 {
		return false
	}
	h := sessionHash(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.revoked[h]
	return ok
}

func (s *Sessions) add(h [sha256.Size]byte, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.revoked[h]; !ok || until.After(t) {
		s.revoked[h] = until
	}
	s.size.Store(int64(len(s.revoked)))
}

// Drop implements opaquetoken.Cache: a revocation notified by another process.
func (s *Sessions) Drop(hash [sha256.Size]byte) { s.add(hash, time.Now().Add(sessionsNotifiedFor)) }

// Flush implements opaquetoken.Cache: '*' on the channel means the table was emptied, so is the
// set (nothing sends it today).
func (s *Sessions) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.revoked)
	s.size.Store(0)
}

// SetLive implements opaquetoken.Cache: while live, notifications bring every revocation and the
// polling stops; becoming live reads once, for what was revoked while nobody listened.
func (s *Sessions) SetLive(live bool) {
	if live && !s.live.Load() {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	s.live.Store(live)
}

// Start runs Run in a goroutine, and Sweep every SweepEvery through impl/platform/sweep (the
// memory and the table, on this replica), until the returned stop is called.
func (s *Sessions) Start() (stop func()) {
	var stopTable func()
	stopLed := s.StartLed(func(name string, every time.Duration, f func(context.Context) (int64, error)) {
		stopTable = sweep.Start(s.log, name, every, f)
	})
	return func() { stopLed(); stopTable() }
}

// StartLed is Start for a server whose sweeps run on one replica at a time (triad's kit.Deps.Sweep,
// impl/platform/sweep's Leader): every replica forgets its expired revocations from memory every
// SweepEvery, and the table's rows go through sweepTable, on whichever replica leads it.
func (s *Sessions) StartLed(sweepTable func(name string, every time.Duration, f func(context.Context) (int64, error))) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	stopForget := sweep.Start(s.log, "revoked sessions in memory", SweepEvery, func(context.Context) (int64, error) { s.forget(); return 0, nil })
	sweepTable("revoked sessions", SweepEvery, s.SweepTable)
	return func() { cancel(); <-done; stopForget() }
}

// Run reads the revocations (all of them first, then the new ones every SessionsPollEvery while
// not live, and once each time it becomes live), until ctx ends.
func (s *Sessions) Run(ctx context.Context) {
	var since time.Time // the newest revocation read, less the margin
	loaded := false
	tick := time.NewTicker(SessionsPollEvery)
	defer tick.Stop()
	for {
		if !loaded || !s.live.Load() {
			if newest, err := s.read(ctx, since); err != nil {
				if ctx.Err() == nil {
					s.log.Debug("revoked sessions: read failed", "err", err)
				}
			} else {
				loaded = true
				if !newest.IsZero() {
					since = newest.Add(-sessionsPollMargin)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
			loaded = false
		}
	}
}

// read adds the revocations made since since and returns the newest one's time.
func (s *Sessions) read(ctx context.Context, since time.Time) (time.Time, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := s.q.RevokedSessionsSince(rctx, since)
	if err != nil {
		return time.Time{}, err
	}
	var newest time.Time
	var h [sha256.Size]byte
	for _, row := range rows {
		if copy(h[:], row.Hash) == sha256.Size {
			s.add(h, row.ExpiresAt)
		}
		if row.RevokedAt.After(newest) {
			newest = row.RevokedAt
		}
	}
	return newest, nil
}

// Sweep forgets expired revocations, in memory and in the table (their tokens are refused anyway),
// and reports how many rows went.
func (s *Sessions) Sweep(ctx context.Context) (int64, error) {
	s.forget()
	return s.SweepTable(ctx)
}

// forget drops the expired revocations from this process's memory.
func (s *Sessions) forget() {
	now := time.Now()
	s.mu.Lock()
	for h, t := range s.revoked {
		if t.Before(now) {
			delete(s.revoked, h)
		}
	}
	s.size.Store(int64(len(s.revoked)))
	s.mu.Unlock()
}

// SweepTable deletes the expired revocations from the table, in batches (sweep.Batches), and
// reports how many rows went: the part of Sweep one replica does for all (StartLed).
func (s *Sessions) SweepTable(ctx context.Context) (int64, error) {
	n, err := sweep.Batches(ctx, func(ctx context.Context) (int64, error) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return s.q.SweepRevokedSessions(sctx)
	})
	if err != nil {
		return n, fmt.Errorf("pgstate: sweep revoked sessions: %w", err)
	}
	return n, nil
}
