// Package pgtx runs a function inside a PostgreSQL transaction and retries it when the server
// aborted it for a serialization failure or a deadlock, which concurrent writers can cause.
package pgtx

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Beginner is what can open a transaction: a *pgxpool.Pool or a *pgx.Conn.
type Beginner interface {
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// maxAttempts bounds retries so a pathological workload fails instead of spinning.
const maxAttempts = 8

// Run calls fn in a transaction with opts and commits it, retrying the whole transaction as Retry
// does. Any other error from fn rolls back and is returned as is.
func Run(ctx context.Context, db Beginner, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return Retry(ctx, func() error { return pgx.BeginTxFunc(ctx, db, opts, fn) })
}

// Retry calls fn, which runs one whole transaction (a single autocommitted statement or a function
// like Run's), again after a short growing pause when PostgreSQL reports SQLSTATE 40001
// (serialization_failure) or 40P01 (deadlock_detected), up to a bounded number of attempts. This
// is the one retry policy of every writer.
func Retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = fn()
		if !Retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt*attempt) * time.Millisecond):
		}
	}
	return err
}

// Retryable reports whether err is a transient conflict that a fresh attempt may not meet.
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// EndOpen rolls back a transaction that a failed pipelined batch (BEGIN … COMMIT sent in one round
// trip) left open on conn. A pooled connection returned inside a transaction is destroyed by
// pgxpool, so without this every failed batch would cost a new connection. It runs even when ctx
// is cancelled, since a cancelled request is a common reason for the failure.
func EndOpen(ctx context.Context, conn *pgx.Conn) {
	if conn.PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
}

// Do is Retry for one autocommitted statement with a result: every write, a single statement
// included, goes through the one retry policy.
func Do[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	var v T
	err := Retry(ctx, func() (err error) {
		v, err = fn()
		return err
	})
	return v, err
}

// Conflicts counts the statements PostgreSQL aborted for a deadlock (40P01) or a serialization
// failure (40001) on the connections it traces, so an operator sees them (metrics:
// triad_db_conflicts_total): each is a transaction Retry runs again, and a deadlock means two
// writes took their locks in different orders. Set it as the pgx.ConnConfig.Tracer of a pool; the
// zero value is ready, and it is safe for concurrent use.
type Conflicts struct {
	deadlocks, serialization atomic.Int64
}

// Counts reports the conflicts seen so far.
func (c *Conflicts) Counts() (deadlocks, serialization int64) {
	return c.deadlocks.Load(), c.serialization.Load()
}

func (c *Conflicts) see(err error) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return
	}
	switch pgErr.Code {
	case "40P01":
		c.deadlocks.Add(1)
	case "40001":
		c.serialization.Add(1)
	}
}

// TraceQueryStart is part of pgx.QueryTracer; it records nothing.
func (c *Conflicts) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

// TraceQueryEnd counts a statement's conflict (a query's error arrives when its rows close).
func (c *Conflicts) TraceQueryEnd(_ context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	c.see(data.Err)
}

// TraceBatchStart is part of pgx.BatchTracer; it records nothing.
func (c *Conflicts) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery counts the conflict of one statement of a pipelined batch.
func (c *Conflicts) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.see(data.Err)
}

// TraceBatchEnd is part of pgx.BatchTracer; a batch's statements were counted one by one.
func (c *Conflicts) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
