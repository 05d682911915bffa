// Package pgread sends the reads that tolerate a hot standby's lag to the standby, without ever
// showing a caller less than it has already seen written: read-your-writes across every replica of
// the server, not only the one that took the write.
//
// How: a read that begins at time T may use the standby only once the standby has replayed the
// primary's WAL up to where it stood at or after T (pg_current_wal_insert_lsn), so every write
// acknowledged before T, by any replica, is visible there. The primary's position is fetched once
// per round trip for all the reads waiting (coalesced: one query in flight, the next batch joins
// the following one), and the standby's replay position is remembered, so a steady stream of reads
// costs the primary one tiny query per round trip per process, not one per read. A standby that is
// behind, unreachable, or not configured sends the read to the primary.
//
// While the primary is away (it does not answer its position: a failover, a frozen or restarting
// primary), reads go on from the standby rather than failing: it is given MaxWait to replay the
// last position the primary gave, and then serves what it has. So a read may then miss a write
// acknowledged in the last moments before the primary went away (its WAL may never have reached
// this standby: a frozen primary's last records, the position being where WAL was inserted, not
// where it was received), never one that the standby had time to replay. The primary is asked
// again every few seconds; reads follow it back once it answers.
//
// The check and the read run on different connections of the standby pool, which is sound when
// DATABASE_READ_URL names one standby server (replay only moves forward); a balancer over several
// standbys would need both on one connection.
package pgread

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Timings of a Reader.
const (
	// lsnTimeout bounds one fetch of a position; past it the read goes to the primary.
	lsnTimeout = 2 * time.Second
	// downFor is how long a standby that failed a check is left alone: reads go to the primary
	// meanwhile rather than each waiting for a connect to fail.
	downFor = 5 * time.Second
)

// Queries of the positions, as byte offsets into the WAL (NULL on a server that is not a standby
// for the replay position, which then counts as caught up: it is a primary).
const (
	primaryPosition = `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`
	replayPosition  = `SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 9223372036854775807)`
)

// Reader picks the pool of each read. It is safe for concurrent use.
type Reader struct {
	primary, standby *pgxpool.Pool
	primaryPos       coalescer
	replayPos        coalescer
	replayed         atomic.Int64 // the standby's replay position last seen
	primarySeen      atomic.Int64 // the primary's position last fetched
	downUntil        atomic.Int64 // unix nanoseconds until which the standby is not tried
	lastPrimary      atomic.Int64 // the primary's position last seen
	primaryAway      atomic.Int64 // unix nanoseconds until which the primary's position is not asked
	// Counts of the reads sent to each.
	onStandby, onPrimary atomic.Int64
	// MaxWait is how long a read waits for the standby to replay what it must see before it goes
	// to the primary; DefaultMaxWait unless changed before the first read.
	MaxWait time.Duration
}

// DefaultMaxWait is a Reader's MaxWait: a few replay delays of a standby on the same network.
const DefaultMaxWait = 20 * time.Millisecond

// New returns a Reader over primary and standby; a nil standby, or the primary itself, makes every
// read go to the primary.
func New(primary, standby *pgxpool.Pool) *Reader {
	if standby == primary {
		standby = nil
	}
	r := &Reader{primary: primary, standby: standby, MaxWait: DefaultMaxWait}
	r.primaryPos.query = func(ctx context.Context) (int64, error) { return position(ctx, primary, primaryPosition) }
	if standby != nil {
		r.replayPos.query = func(ctx context.Context) (int64, error) { return position(ctx, standby, replayPosition) }
	}
	return r
}

func position(ctx context.Context, pool *pgxpool.Pool, sql string) (pos int64, err error) {
	err = pool.QueryRow(ctx, sql).Scan(&pos)
	return pos, err
}

// Pool returns the pool a read beginning now should use: the standby when it has replayed every
// write the primary had when Pool was called, else the primary.
func (r *Reader) Pool(ctx context.Context) *pgxpool.Pool {
	if r.standby == nil || time.Now().UnixNano() < r.downUntil.Load() {
		r.onPrimary.Add(1)
		return r.primary
	}
	target, away, ok := r.target(ctx)
	if !ok {
		r.onPrimary.Add(1)
		return r.primary
	}
	for seen := r.primarySeen.Load(); target > seen && !r.primarySeen.CompareAndSwap(seen, target); seen = r.primarySeen.Load() {
	}
	// A write a moment ago is usually replayed within a millisecond or two: the standby is asked
	// again until MaxWait has passed, then the read goes to the primary.
	deadline := time.Now().Add(r.MaxWait)
	for r.replayed.Load() < target {
		pos, err := r.replayPos.get(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.downUntil.Store(time.Now().Add(downFor).UnixNano())
			}
			r.onPrimary.Add(1)
			return r.primary
		}
		for seen := r.replayed.Load(); pos > seen && !r.replayed.CompareAndSwap(seen, pos); seen = r.replayed.Load() {
		}
		if pos < target && time.Now().After(deadline) {
			if away { // the primary would not answer: the standby serves what it has
				break
			}
			r.onPrimary.Add(1)
			return r.primary
		}
	}
	r.onStandby.Add(1)
	return r.standby
}

// target is the position the standby must have replayed for a read beginning now: the primary's
// current one, or while the primary is away (away true) the last one it gave (ok false: ctx ended).
func (r *Reader) target(ctx context.Context) (pos int64, away, ok bool) {
	if time.Now().UnixNano() < r.primaryAway.Load() {
		return r.lastPrimary.Load(), true, true
	}
	pos, err := r.primaryPos.get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, false
		}
		r.primaryAway.Store(time.Now().Add(downFor).UnixNano())
		return r.lastPrimary.Load(), true, true
	}
	for seen := r.lastPrimary.Load(); pos > seen && !r.lastPrimary.CompareAndSwap(seen, pos); seen = r.lastPrimary.Load() {
	}
	return pos, false, true
}

// Do runs the read fn on the pool Pool picks. When that was the standby and fn failed for want of
// it (a connection that failed, a server shutting down), the standby is left alone for a few
// seconds and fn runs again on the primary: a standby that went away costs no request.
func (r *Reader) Do(ctx context.Context, fn func(*pgxpool.Pool) error) error {
	p := r.Pool(ctx)
	err := fn(p)
	if err == nil || p == r.primary || ctx.Err() != nil || !unreachable(err) {
		return err
	}
	r.downUntil.Store(time.Now().Add(downFor).UnixNano())
	r.onStandby.Add(-1)
	r.onPrimary.Add(1)
	return fn(r.primary)
}

// unreachable reports whether err says the server could not answer, rather than answered (an SQL
// error, no rows).
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "57P") // shutting down, crashed, cannot connect now
	}
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// Lag reports how far, in bytes of WAL, the standby's replay stood behind the primary as the
// routed reads last saw them (the primary's position last fetched less the replay position last
// seen; 0 once replay has caught up): ok is false without a standby, or before a routed read.
// It is as fresh as the last read that tolerates lag: a standby nobody reads from is not watched.
func (r *Reader) Lag() (bytes int64, ok bool) {
	primary, replayed := r.primarySeen.Load(), r.replayed.Load()
	if r.standby == nil || primary == 0 {
		return 0, false
	}
	return max(0, primary-replayed), true
}

// HasStandby reports whether reads may go to a standby (DATABASE_READ_URL names one).
func (r *Reader) HasStandby() bool { return r.standby != nil }

// Counts reports how many reads went to the standby and to the primary.
func (r *Reader) Counts() (standby, primary int64) { return r.onStandby.Load(), r.onPrimary.Load() }

// coalescer runs query for every caller, never more than one at a time, and gives each caller
// the answer of a query that started after the caller asked: a caller that comes while one runs
// waits for the next, which every caller arriving meanwhile shares.
type coalescer struct {
	query func(context.Context) (int64, error)

	mu      sync.Mutex
	running bool
	next    *call // the call the callers arriving now will get
}

type call struct {
	done chan struct{}
	pos  int64
	err  error
}

func (c *coalescer) get(ctx context.Context) (int64, error) {
	c.mu.Lock()
	if c.next == nil {
		c.next = &call{done: make(chan struct{})}
	}
	cl := c.next
	if !c.running {
		c.running = true
		go c.run()
	}
	c.mu.Unlock()
	select {
	case <-cl.done:
		return cl.pos, cl.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run serves the waiting call, then the one that gathered meanwhile, until none is waiting.
func (c *coalescer) run() {
	for {
		c.mu.Lock()
		cl := c.next
		c.next = nil
		if cl == nil {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), lsnTimeout)
		cl.pos, cl.err = c.query(ctx)
		cancel()
		close(cl.done)
	}
}
