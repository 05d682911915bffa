// Package platform is the server's way to PostgreSQL, started in one place: the managed cluster
// when no database is given (pgcluster), the pools and the direct sessions (Open), the schema
// brought up to date under the start-up lock (Migrated, Migrate, WaitSchema: migrate), the reads
// sent to a standby (pgread) and the conflicts counted (pgtx). It takes plain options; the
// server's configuration stays in cmd/server.
package platform

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// Options say where the databases are, each field being the setting named.
type Options struct {
	// URL is DATABASE_URL: every query goes there; it may be a transaction-mode pooler.
	URL string
	// DirectURL is DATABASE_DIRECT_URL, PostgreSQL without a pooler; empty uses the primary.
	DirectURL string
	// ReadURL is DATABASE_READ_URL, a hot standby; empty reads from the pool.
	ReadURL string
	// MaxConns is DB_MAX_CONNS, each pool's size (poolSize).
	MaxConns int
	// AppRole is DB_APP_ROLE: Migrate grants it the rows of every table.
	AppRole string
	Log     *slog.Logger
	// Tracer, when not nil, sees every statement of the pools too (the SQL spans of package tracing).
	Tracer pgx.QueryTracer
}

// StartCluster starts the managed PostgreSQL under dir (when no DATABASE_URL is given) and makes
// sure its database triad exists; it returns that database's URL and what stops the cluster.
func StartCluster(ctx context.Context, dir string, log *slog.Logger) (url string, stop func(), err error) {
	cluster, err := pgcluster.Start(ctx, dir, pgcluster.Options{
		Log:  func(f string, a ...any) { log.Info(fmt.Sprintf(f, a...)) },
		Warn: func(f string, a ...any) { log.Warn(fmt.Sprintf(f, a...)) },
	})
	if err != nil {
		return "", nil, fmt.Errorf("managed PostgreSQL: %w", err)
	}
	stop = func() {
		if err := cluster.Stop(); err != nil {
			log.Error("stopping PostgreSQL", "err", err)
		}
	}
	if err := cluster.EnsureDatabase(ctx, "triad"); err != nil {
		stop()
		return "", nil, err
	}
	return cluster.URL("triad"), stop, nil
}

// Databases are the server's three ways to PostgreSQL (docs/replicas.md, "Behind a pooler, with
// read replicas"):
//   - pool, DATABASE_URL: every query and transaction; may be a transaction-mode pooler
//     (PgBouncer, RDS Proxy), so nothing on it depends on the session;
//   - direct, DATABASE_DIRECT_URL (else DATABASE_URL): what needs a session of its own, made
//     beside the pool: the token revocation listener (LISTEN), the Telegram leader's and the
//     start-up's advisory locks, the migrations;
//   - read, DATABASE_READ_URL (else the pool): a hot standby for the reads that tolerate its lag.
type Databases struct {
	Pool   *pgxpool.Pool
	Read   *pgxpool.Pool
	Direct *pgx.ConnConfig
	// Reads picks the pool of the reads that tolerate a standby's lag: Read's when it has the
	// caller's writes, else Pool.
	Reads *pgread.Reader
	// Pooled says DATABASE_URL is taken to be a transaction-mode pooler: a direct URL other than
	// it was given.
	Pooled bool
	// Conflicts counts the deadlocks and serialization failures the pools' statements met.
	Conflicts *pgtx.Conflicts
}

// Close closes the pools.
func (d *Databases) Close() {
	if d.Read != d.Pool {
		d.Read.Close()
	}
	d.Pool.Close()
}

// directConfig is the configuration of the direct sessions: DATABASE_DIRECT_URL, else primary
// (DATABASE_URL or the managed cluster's).
func directConfig(o Options, primary string) (*pgx.ConnConfig, error) {
	u := o.DirectURL
	if u == "" {
		u = primary
	}
	cc, err := pgx.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_DIRECT_URL: %w", err)
	}
	return cc, nil
}

// Open opens the pools over primary (DATABASE_URL or the managed cluster's). Behind a pooler the
// pool's statements are described once per connection and then sent unnamed (pgx's cache_describe mode), unless the URL chooses a
// default_query_exec_mode itself: a named prepared statement lives in one server connection, which
// a transaction-mode pooler hands to another client after each transaction ("prepared statement
// stmtcache_… does not exist"). The pool sends no startup parameter besides pgx's own.
func Open(ctx context.Context, o Options, primary string) (*Databases, error) {
	direct, err := directConfig(o, primary)
	if err != nil {
		return nil, err
	}
	log := o.Log
	d := &Databases{Direct: direct, Pooled: o.DirectURL != "" && o.DirectURL != o.URL,
		Conflicts: &pgtx.Conflicts{}}
	open := func(name, url string) (*pgxpool.Pool, error) {
		pc, err := pgxpool.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		pc.MaxConns = poolSize(o.MaxConns, url, runtime.GOMAXPROCS(0))
		pc.ConnConfig.Tracer = d.Conflicts
		if o.Tracer != nil {
			pc.ConnConfig.Tracer = multitracer.New(d.Conflicts, o.Tracer)
		}
		if d.Pooled && !strings.Contains(url, "default_query_exec_mode") {
			pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		}
		p, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		log.Info("database", "url", name, "max_conns", pc.MaxConns, "exec_mode", pc.ConnConfig.DefaultQueryExecMode.String())
		return p, nil
	}
	if d.Pool, err = open("DATABASE_URL", primary); err != nil {
		return nil, err
	}
	d.Read = d.Pool
	if o.ReadURL != "" {
		if d.Read, err = open("DATABASE_READ_URL", o.ReadURL); err != nil {
			d.Pool.Close()
			return nil, err
		}
	}
	d.Reads = pgread.New(d.Pool, d.Read)
	return d, nil
}

// minPoolSize is the smallest default pool: a request may hold one connection while the token
// sweeper, a readiness probe and a login's throttle check each want one.
const minPoolSize = 4

// poolSize is DB_MAX_CONNS, else the URL's pool_max_conns, else max(4, procs), procs being
// GOMAXPROCS, which follows the container's CPU limit (the Go runtime reads the cgroup quota),
// where pgx's own default follows the node's cores: 5 pods on 16-core nodes filled
// max_connections=100.
func poolSize(maxConns int, url string, procs int) int32 {
	if maxConns > 0 {
		return int32(maxConns)
	}
	if pc, err := pgxpool.ParseConfig(url); err == nil && strings.Contains(url, "pool_max_conns") {
		return pc.MaxConns
	}
	return int32(max(minPoolSize, procs))
}

// Migrated runs f under the start-up lock over the database (migrate.Exclusive) once the schema
// is up to date (migrate.Ensure): replicas starting together take turns, and each finds the work
// done. A database already at the newest schema is only read, so a role that may only read and
// write rows starts once Migrate has run.
// It logs the schema version the binary expects and the one it finds (logSchema).
func Migrated(ctx context.Context, direct *pgx.ConnConfig, log *slog.Logger, f func(context.Context) error) error {
	return migrate.Exclusive(ctx, direct, func(ctx context.Context) error {
		if _, err := migrate.Ensure(ctx, direct); err != nil {
			return err
		}
		logSchema(ctx, direct, log)
		return f(ctx)
	})
}

// logSchema writes the line that names the schema version this binary expects (its newest
// migration) and the one the database has: at info when they match, a warning when the database's
// is newer, which is a rollback (docs/operations.md, "Runbook: rollback"): the older binary serves
// a schema a later release migrated, which holds only because migrations add and never take away
// within a release's window.
func logSchema(ctx context.Context, direct *pgx.ConnConfig, log *slog.Logger) {
	expects, finds, err := migrate.Versions(ctx, direct)
	switch {
	case err != nil:
		log.Warn("schema: cannot read the database's schema version", "expects", expects, "err", err)
	case finds > expects:
		log.Warn("schema: the database is newer than this binary (a rollback): serving on it; migrations of a release only add, so the older binary's queries still hold",
			"expects", expects, "finds", finds)
	default:
		log.Info("schema: the database is at this binary's version", "expects", expects, "finds", finds)
	}
}

// WaitSchema is `server -mode wait-schema` over the direct URL (DATABASE_DIRECT_URL, else
// primary): see waitSchema. It opens no pool.
func WaitSchema(ctx context.Context, o Options, primary string) error {
	direct, err := directConfig(o, primary)
	if err != nil {
		return err
	}
	return waitSchema(ctx, direct, o.Log, schemaPoll)
}

// Migrate is `server -mode migrate` over the direct URL (DATABASE_DIRECT_URL, else primary): see
// runMigrate. It opens no pool.
func Migrate(ctx context.Context, o Options, primary string) error {
	direct, err := directConfig(o, primary)
	if err != nil {
		return err
	}
	return runMigrate(ctx, o, direct)
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
			logSchema(ctx, direct, log)
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
func runMigrate(ctx context.Context, o Options, direct *pgx.ConnConfig) error {
	var applied bool
	// Under the start-up lock, as servers starting meanwhile migrate under it too.
	err := migrate.Exclusive(ctx, direct, func(ctx context.Context) (err error) {
		if applied, err = migrate.Ensure(ctx, direct); err != nil || o.AppRole == "" {
			return err
		}
		conn, err := pgx.ConnectConfig(ctx, direct)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return migrate.Grant(ctx, conn, o.AppRole)
	})
	if err != nil {
		return err
	}
	o.Log.Info("migrate: the schema is up to date", "applied", applied, "granted_to", o.AppRole)
	return nil
}
