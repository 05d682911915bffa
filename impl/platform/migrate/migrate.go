// Package migrate applies the embedded goose migrations to a database, and serialises the start-up
// work of servers that share one database (migrations, dev data, the first admin) under a
// PostgreSQL advisory lock, so N replicas started at the same instant all come up.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/triadhq/triad/db/schema"
)

// Up brings the database behind pool to the newest schema version. It holds goose's own session
// advisory lock while it works, so two callers never apply the same migration twice, and it
// applies migrations missing below the newest applied version too (out of order): migrations are
// numbered in ranges per area of the code, so a lower number may land after a higher one.
func Up(ctx context.Context, pool *pgxpool.Pool) error {
	provider, done, err := newProvider(pool, true)
	if err != nil {
		return err
	}
	defer done()
	if _, err := provider.Up(ctx); err != nil {
		return wrap(err)
	}
	return nil
}

// UpTo is Up stopping at version: for tests of a migration run over a live database that the
// migrations before it built (impl/surfaces/orders' TestLedgerConversion_WhileServing).
func UpTo(ctx context.Context, pool *pgxpool.Pool, version int64) error {
	provider, done, err := newProvider(pool, true)
	if err != nil {
		return err
	}
	defer done()
	if _, err := provider.UpTo(ctx, version); err != nil {
		return wrap(err)
	}
	return nil
}

// wrap names the way out of a refusal for want of privileges: a role that may only read and write
// rows cannot migrate.
func wrap(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		return fmt.Errorf("migrate: %w: this database role may not change the schema; apply the migrations as the tables' owner first (server -mode migrate, docs/deploy.md)", err)
	}
	return fmt.Errorf("migrate: %w", err)
}

// newProvider is goose over pool, with goose's session lock when locked.
func newProvider(pool *pgxpool.Pool, locked bool) (*goose.Provider, func(), error) {
	db := stdlib.OpenDBFromPool(pool)
	opts := []goose.ProviderOption{goose.WithAllowOutofOrder(true)}
	if locked {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("migrate: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, schema.FS, opts...)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	return provider, func() { db.Close() }, nil
}

// Ensure applies the migrations the database reached with direct lacks, and reports whether there
// were any. Run it inside Exclusive: it takes no lock of its own (goose's is a session lock, which
// a transaction-mode pooler would leave on a pooled server connection), so it also works when the
// only URL is a pooler's. A database
// already at the newest schema is only read (goose's version table), so a server whose role may
// only read and write rows starts on a database that `server -mode migrate` brought up to date.
func Ensure(ctx context.Context, direct *pgx.ConnConfig) (applied bool, err error) {
	provider, _, done, err := directProvider(ctx, direct)
	if err != nil {
		return false, err
	}
	defer done()
	pending, err := provider.HasPending(ctx)
	if err != nil {
		return false, wrap(err)
	}
	if !pending {
		return false, nil
	}
	if _, err := provider.Up(ctx); err != nil {
		return false, wrap(err)
	}
	return true, nil
}

// directProvider is goose over a small pool of its own made with direct, without goose's lock.
func directProvider(ctx context.Context, direct *pgx.ConnConfig) (*goose.Provider, *pgxpool.Pool, func(), error) {
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("migrate: %w", err)
	}
	cfg.ConnConfig = direct.Copy()
	// No named prepared statements, in case direct is a transaction-mode pooler after all: they
	// live in one server connection, which the pooler gives another client after each transaction.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	// goose holds one connection while it reads its version table and may take another.
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("migrate: %w", err)
	}
	provider, done, err := newProvider(pool, false)
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	return provider, pool, func() { done(); pool.Close() }, nil
}

// Pending is how many of the embedded migrations the database reached with direct lacks: what
// `server -mode wait-schema` (a pod's init step) waits to see reach 0. It only reads goose's
// version table, so a role that may only read and write rows can ask; a database without that
// table lacks them all.
func Pending(ctx context.Context, direct *pgx.ConnConfig) (int, error) {
	provider, pool, done, err := directProvider(ctx, direct)
	if err != nil {
		return 0, err
	}
	defer done()
	// goose would create its version table first, which such a role may not do.
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('goose_db_version') IS NOT NULL").Scan(&exists); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if !exists {
		return len(provider.ListSources()), nil
	}
	status, err := provider.Status(ctx)
	if err != nil {
		return 0, wrap(err)
	}
	n := 0
	for _, m := range status {
		if m.State == goose.StatePending {
			n++
		}
	}
	return n, nil
}

// Versions reports the newest migration this binary carries (expects) and the newest the database
// reached with direct has applied (finds; 0 without goose's version table). finds above expects
// is a rollback: an older binary on a schema a later release migrated. It only reads.
func Versions(ctx context.Context, direct *pgx.ConnConfig) (expects, finds int64, err error) {
	provider, pool, done, err := directProvider(ctx, direct)
	if err != nil {
		return 0, 0, err
	}
	defer done()
	for _, s := range provider.ListSources() {
		expects = max(expects, s.Version)
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('goose_db_version') IS NOT NULL").Scan(&exists); err != nil {
		return expects, 0, fmt.Errorf("migrate: %w", err)
	}
	if !exists {
		return expects, 0, nil
	}
	if err := pool.QueryRow(ctx, "SELECT COALESCE(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&finds); err != nil {
		return expects, 0, fmt.Errorf("migrate: %w", err)
	}
	return expects, finds, nil
}

// Grant lets role read and write the rows of every table (and use every sequence) of the current
// schema, now and in the tables later migrations create (default privileges of the role running
// Grant, the owner), and nothing else: such a role runs the server, while the owner runs
// `server -mode migrate`. The statements are those of docs/deploy.md.
func Grant(ctx context.Context, conn *pgx.Conn, role string) error {
	r := pgx.Identifier{role}.Sanitize()
	for _, stmt := range []string{
		"GRANT USAGE ON SCHEMA public TO " + r,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + r,
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + r,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + r,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO " + r,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("migrate: grant to %s: %w", role, err)
		}
	}
	return nil
}

// startupLockKey identifies triad's start-up lock among the database's advisory locks. It differs
// from goose's own lock key, so Up may run (and take that lock) while this one is held.
const startupLockKey int64 = 0x7472696164 // "triad" in ASCII

// Exclusive runs fn while holding the database-wide start-up lock: servers starting together on
// one database (and `server -mode migrate`) run their start-up work one after the other, and each
// finds what the one before it did (the schema applied, the dev data's marker rows). The lock is
// a transaction-level advisory lock in a transaction held open on a connection of its own while fn
// runs: a transaction keeps its server connection even through a transaction-mode pooler (a
// session lock would stay on a pooled server connection once the session moved on, and every later
// server would wait for it forever), and a server that dies while holding it ends the transaction,
// and so the lock, with its connection. That connection is made with conn's configuration beside
// the pool, not taken from it: fn needs the pool's connections, and a pool of one would otherwise
// wait for the connection the lock holds.
//
// Neither the holder nor a waiter keeps a snapshot open: a migration that builds an index
// CONCURRENTLY (00330) waits for every transaction whose snapshot is older than its own to end,
// so a holder's idle transaction with a snapshot, or a waiter blocked in pg_advisory_xact_lock
// (a statement that holds one for as long as it waits), would wait on the migration that waits
// on them, a deadlock PostgreSQL cannot see. So the lock is taken with the simple protocol (pgx's
// extended protocol leaves the transaction's snapshot in place after the statement), and a waiter
// tries (pg_try_advisory_xact_lock) in a short transaction of its own, again after a pause, until
// it gets it.
func Exclusive(ctx context.Context, conn *pgx.ConnConfig, fn func(context.Context) error) error {
	c, err := pgx.ConnectConfig(ctx, conn.Copy())
	if err != nil {
		return fmt.Errorf("start-up lock: %w", err)
	}
	defer func() {
		// Ending the session rolls the transaction back, which is the unlock. A cancelled ctx
		// must not keep the lock, so the close runs on a context of its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	pause := 20 * time.Millisecond
	for {
		got, err := tryStartupLock(ctx, c)
		if err != nil {
			return fmt.Errorf("start-up lock: %w", err)
		}
		if got {
			return fn(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start-up lock: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// tryStartupLock begins a transaction on c and takes the start-up lock in it if it is free,
// leaving the transaction open (and no snapshot) when it got the lock, and ending it otherwise.
func tryStartupLock(ctx context.Context, c *pgx.Conn) (bool, error) {
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		return false, err
	}
	var got bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", pgx.QueryExecModeSimpleProtocol, startupLockKey).Scan(&got); err != nil {
		return false, err
	}
	if !got {
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return false, err
		}
	}
	return got, nil
}
