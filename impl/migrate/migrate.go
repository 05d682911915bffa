// Package migrate applies the embedded goose migrations to a database, and serialises the start-up
// work of servers that share one database (migrations, dev data, the first admin) under a
// PostgreSQL advisory lock, so N replicas started at the same instant all come up.
package migrate

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, schema.FS,
		goose.WithSessionLocker(locker), goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// startupLockKey identifies triad's start-up lock among the database's advisory locks. It differs
// from goose's own lock key, so Up may run (and take that lock) while this one is held.
const startupLockKey int64 = 0x7472696164 // "triad" in ASCII

// Exclusive runs fn while holding the database-wide start-up lock: servers starting together on
// one database run their start-up work one after the other, and each finds what the one before it
// did (the schema applied, the dev data's marker rows). The lock is a session-level advisory lock
// on a connection of its own, so a server that dies while holding it releases it with its session.
// That connection is made beside the pool (with its configuration), not taken from it: fn needs
// the pool's connections (Up holds one for goose's lock and its migrations), and a pool of one
// would otherwise wait for the connection the lock holds, forever.
func Exclusive(ctx context.Context, pool *pgxpool.Pool, fn func(context.Context) error) error {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("start-up lock: %w", err)
	}
	defer func() {
		// Ending the session is the unlock: PostgreSQL frees every lock it held. A cancelled ctx
		// must not keep the lock, so the close runs on a context of its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", startupLockKey); err != nil {
		return fmt.Errorf("start-up lock: %w", err)
	}
	return fn(ctx)
}
