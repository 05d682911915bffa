package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// databases are the server's three ways to PostgreSQL (docs/replicas.md, "Behind a pooler, with
// read replicas"):
//   - pool, DATABASE_URL: every query and transaction; may be a transaction-mode pooler
//     (PgBouncer, RDS Proxy), so nothing on it depends on the session;
//   - direct, DATABASE_DIRECT_URL (else DATABASE_URL): what needs a session of its own, made
//     beside the pool: the token revocation listener (LISTEN), the Telegram leader's and the
//     start-up's advisory locks, the migrations;
//   - read, DATABASE_READ_URL (else the pool): a hot standby for the reads that tolerate its lag.
type databases struct {
	pool   *pgxpool.Pool
	read   *pgxpool.Pool
	direct *pgx.ConnConfig
	// pooled says DATABASE_URL is taken to be a transaction-mode pooler: a direct URL other than it
	// was given.
	pooled bool
	// conflicts counts the deadlocks and serialization failures the pools' statements met.
	conflicts *pgtx.Conflicts
}

func (d *databases) close() {
	if d.read != d.pool {
		d.read.Close()
	}
	d.pool.Close()
}

// directConfig is the configuration of the direct sessions: DATABASE_DIRECT_URL, else primary
// (DATABASE_URL or the managed cluster's).
func directConfig(cfg Config, primary string) (*pgx.ConnConfig, error) {
	u := string(cfg.DatabaseDirectURL)
	if u == "" {
		u = primary
	}
	cc, err := pgx.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_DIRECT_URL: %w", err)
	}
	return cc, nil
}

// openDatabases opens the pools. Behind a pooler the pool's statements are described once per
// connection and then sent unnamed (pgx's cache_describe mode), unless the URL chooses a
// default_query_exec_mode itself: a named prepared statement lives in one server connection, which
// a transaction-mode pooler hands to another client after each transaction ("prepared statement
// stmtcache_… does not exist"). The pool sends no startup parameter besides pgx's own.
func openDatabases(ctx context.Context, cfg Config, primary string, log *slog.Logger) (*databases, error) {
	direct, err := directConfig(cfg, primary)
	if err != nil {
		return nil, err
	}
	d := &databases{direct: direct, pooled: cfg.DatabaseDirectURL != "" && cfg.DatabaseDirectURL != cfg.DatabaseURL,
		conflicts: &pgtx.Conflicts{}}
	open := func(name, url string) (*pgxpool.Pool, error) {
		pc, err := pgxpool.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		pc.MaxConns = poolSize(cfg, url, runtime.GOMAXPROCS(0))
		pc.ConnConfig.Tracer = d.conflicts
		if d.pooled && !strings.Contains(url, "default_query_exec_mode") {
			pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		}
		p, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		log.Info("database", "url", name, "max_conns", pc.MaxConns, "exec_mode", pc.ConnConfig.DefaultQueryExecMode.String())
		return p, nil
	}
	if d.pool, err = open("DATABASE_URL", primary); err != nil {
		return nil, err
	}
	d.read = d.pool
	if cfg.DatabaseReadURL != "" {
		if d.read, err = open("DATABASE_READ_URL", string(cfg.DatabaseReadURL)); err != nil {
			d.pool.Close()
			return nil, err
		}
	}
	return d, nil
}

// minPoolSize is the smallest default pool: a request may hold one connection while the token
// sweeper, a readiness probe and a login's throttle check each want one.
const minPoolSize = 4

// poolSize is DB_MAX_CONNS, else the URL's pool_max_conns, else max(4, procs), procs being
// GOMAXPROCS, which follows the container's CPU limit (the Go runtime reads the cgroup quota),
// where pgx's own default follows the node's cores: 5 pods on 16-core nodes filled
// max_connections=100.
func poolSize(cfg Config, url string, procs int) int32 {
	if cfg.DBMaxConns > 0 {
		return int32(cfg.DBMaxConns)
	}
	if pc, err := pgxpool.ParseConfig(url); err == nil && strings.Contains(url, "pool_max_conns") {
		return pc.MaxConns
	}
	return int32(max(minPoolSize, procs))
}

// runSchemaMode is `-mode migrate` or `-mode wait-schema` over the direct URL (DATABASE_DIRECT_URL,
// else primary): neither opens a pool nor serves.
func runSchemaMode(ctx context.Context, cfg Config, primary string, log *slog.Logger) error {
	direct, err := directConfig(cfg, primary)
	if err != nil {
		return err
	}
	if cfg.Mode == "wait-schema" {
		return waitSchema(ctx, direct, log, schemaPoll)
	}
	return runMigrate(ctx, cfg, direct, log)
}

// schemaPoll is how often `-mode wait-schema` asks again.
const schemaPoll = 2 * time.Second

// waitSchema is `server -mode wait-schema`, a pod's init step (deploy/k8s/base/deployment.yaml):
// it returns once the database has every migration this binary carries, so the pod's server
// starts only then, where it would otherwise stop at once on a missing migration (it runs as a
// role that may not apply them) and crash-loop until the release's migration Job is done. An
// unreachable database is waited for too. Each round says what it waits for.
func waitSchema(ctx context.Context, direct *pgx.ConnConfig, log *slog.Logger, every time.Duration) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := migrate.Pending(cctx, direct)
		cancel()
		switch {
		case err == nil && n == 0:
			log.Info("wait-schema: the database has every migration of this release; the server may start")
			return nil
		case err == nil:
			log.Info("wait-schema: waiting for the release's migrations (server -mode migrate, the migration Job) before the server starts", "missing", n)
		default:
			log.Warn("wait-schema: cannot read the schema version yet; waiting", "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait-schema: %w", ctx.Err())
		case <-time.After(every):
		}
	}
}

// runMigrate is `server -mode migrate`: it applies the migrations through the direct URL, grants
// DB_APP_ROLE the rows of every table when set, and returns.
func runMigrate(ctx context.Context, cfg Config, direct *pgx.ConnConfig, log *slog.Logger) error {
	var applied bool
	// Under the start-up lock, as servers starting meanwhile migrate under it too.
	err := migrate.Exclusive(ctx, direct, func(ctx context.Context) (err error) {
		if applied, err = migrate.Ensure(ctx, direct); err != nil || cfg.DBAppRole == "" {
			return err
		}
		conn, err := pgx.ConnectConfig(ctx, direct)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return migrate.Grant(ctx, conn, cfg.DBAppRole)
	})
	if err != nil {
		return err
	}
	log.Info("migrate: the schema is up to date", "applied", applied, "granted_to", cfg.DBAppRole)
	return nil
}
