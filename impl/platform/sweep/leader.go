package sweep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/triadhq/triad/gen/db"
)

// BatchSize is the most rows one batch of a sweep deletes (the LIMIT of each sweep's DELETE in
// db/queries): one short statement, so a sweep never holds many row locks or one lock for long.
const BatchSize = 1000

// Leader runs each sweep on one replica at a time: before a sweep, and again before each of its
// batches, it claims the sweep's lease in sweep_leases by compare-and-swap (free, run out, or
// already this process's), for twice the sweep's interval. A replica that does not get it skips
// that run; one that stalled past its lease finds it taken at its next batch and stops there, so
// two replicas never sweep one table at once. If the leader dies, another takes over once the
// lease runs out.
type Leader struct {
	q      *db.Queries
	holder string
	obs    Observer
}

// Observer hears each sweep a Leader ran: the rows it deleted, when it ended, and whether it failed.
type Observer interface {
	Swept(name string, rows int64, at time.Time, err error)
}

// NewLeader is a Leader over conn whose runs obs hears (nil: none); its holder name is random per
// process.
func NewLeader(conn db.DBTX, obs Observer) *Leader {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Leader{q: db.New(conn), holder: hex.EncodeToString(b[:]), obs: obs}
}

// errNotLeader ends a sweep whose lease another replica holds.
var errNotLeader = errors.New("sweep: another replica holds the lease")

type leaseKey struct{}

// lease is what a sweep's batches renew (StillLeading).
type lease struct {
	l    *Leader
	name string
	ttl  time.Duration
}

// Wrap is f run under the lease name, held for ttl: f runs only while this process holds it,
// and Batches within f renew it before each batch.
func (l *Leader) Wrap(name string, ttl time.Duration, f Func) Func {
	return func(ctx context.Context) (int64, error) {
		ls := &lease{l: l, name: name, ttl: ttl}
		if ok, err := ls.claim(ctx); err != nil || !ok {
			return 0, err
		}
		n, err := f(context.WithValue(ctx, leaseKey{}, ls))
		if errors.Is(err, errNotLeader) {
			err = nil // another replica took over; it carries on
		}
		if l.obs != nil {
			l.obs.Swept(name, n, time.Now(), err)
		}
		return n, err
	}
}

// claim takes or renews the lease; false means another replica holds it.
func (ls *lease) claim(ctx context.Context) (bool, error) {
	_, err := ls.l.q.ClaimSweepLease(ctx, db.ClaimSweepLeaseParams{Name: ls.name, Holder: ls.l.holder,
		Ttl: pgtype.Interval{Microseconds: ls.ttl.Microseconds(), Valid: true}})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sweep: lease %s: %w", ls.name, err)
	}
	return true, nil
}

// Batches runs batch (which deletes at most BatchSize rows) until it comes back short, and reports
// the rows deleted. Under a Leader it renews the lease before each batch after the first and stops
// when another replica holds it.
func Batches(ctx context.Context, batch func(context.Context) (int64, error)) (int64, error) {
	ls, _ := ctx.Value(leaseKey{}).(*lease)
	var total int64
	for i := 0; ; i++ {
		if i > 0 && ls != nil {
			ok, err := ls.claim(ctx)
			if err != nil {
				return total, err
			}
			if !ok {
				return total, errNotLeader
			}
		}
		n, err := batch(ctx)
		total += n
		if err != nil || n < BatchSize {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
