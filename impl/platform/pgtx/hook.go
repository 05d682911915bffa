package pgtx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Hook is work the caller of a write adds to the write's own transaction, so that it commits with
// the write or not at all. The idempotency layer is the one user: Before claims the request's key
// (or finds its answer), After stores the answer rendered from the write's result. A write never
// knows what the hook does; it only runs through Write or WriteOne, which call the hook.
type Hook interface {
	// Before runs first in the transaction, before the write's own statements; an error from it
	// ends the transaction (rolled back) and is returned by Write as it is.
	Before(ctx context.Context, tx pgx.Tx) error
	// After runs last, with the write's result, once the write succeeded and has taken every lock
	// it takes; an error from it rolls the write back.
	After(ctx context.Context, tx pgx.Tx, result any) error
}

type hookKey struct{}

// WithHook returns ctx carrying h for the write that runs under it. One write per context: the
// hook's After answers one request.
func WithHook(ctx context.Context, h Hook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

func hookOf(ctx context.Context) Hook {
	h, _ := ctx.Value(hookKey{}).(Hook)
	return h
}

// Conn is what a write's statements run on: the pool (autocommitted) or a transaction. gen/db's
// DBTX is the same interface, so db.New(conn) builds the queries on either.
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Pool is a database that runs statements and opens transactions (a *pgxpool.Pool).
type Pool interface {
	Beginner
	Conn
}

// Write runs fn in one read-committed transaction, retried as Run, and returns its result. When
// ctx carries a Hook (WithHook), the hook's Before opens the transaction and its After, given
// fn's result, closes it, so what the hook writes commits with fn's writes or not at all.
func Write[T any](ctx context.Context, db Beginner, fn func(tx pgx.Tx) (T, error)) (T, error) {
	h := hookOf(ctx)
	var out T
	err := Run(ctx, db, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if h != nil {
			if err := h.Before(ctx, tx); err != nil {
				return err
			}
		}
		v, err := fn(tx)
		if err != nil {
			return err
		}
		if h != nil {
			if err := h.After(ctx, tx, v); err != nil {
				return err
			}
		}
		out = v
		return nil
	})
	return out, err
}

// WriteOne runs fn, a write of one statement (or a statement and reads that explain its result),
// on db autocommitted and retried as Do when ctx carries no Hook: one round trip, as a plain write
// costs. With a Hook it runs fn in Write's transaction instead, between the hook's Before and After.
func WriteOne[T any](ctx context.Context, db Pool, fn func(c Conn) (T, error)) (T, error) {
	if hookOf(ctx) == nil {
		return Do(ctx, func() (T, error) { return fn(db) })
	}
	return Write(ctx, db, func(tx pgx.Tx) (T, error) { return fn(tx) })
}
