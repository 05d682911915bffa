// Package dbtest gives every test a PostgreSQL database of its own.
//
// One private cluster serves a whole test process (started on first use, stopped by Main). The
// migrations run once into a template database; each test then gets a clone of it, which takes tens
// of milliseconds, so tests run in parallel without sharing rows. Set TRIAD_TEST_DATABASE_URL to an
// administrator URL to use an existing server instead of a private cluster.
//
// A package that uses dbtest declares
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
package dbtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
	"github.com/triadhq/triad/impl/platform/pgcluster"
)

var (
	mainCalled atomic.Bool
	once       sync.Once
	setupErr   error
	cluster    *pgcluster.Cluster
	clusterDir string
	adminURL   string
	admin      *pgxpool.Pool // CREATE and DROP DATABASE, on connections kept for the whole process
	template   string
	createMu   sync.Mutex
	seq        atomic.Int64
)

// Main runs the package's tests, then after (the package's own clean-up of what its tests shared),
// then stops the private cluster, if one was started.
func Main(m *testing.M, after ...func()) {
	mainCalled.Store(true)
	code := m.Run()
	for _, f := range after {
		f()
	}
	if admin != nil {
		admin.Close()
	}
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "dbtest:", err)
		}
		os.RemoveAll(clusterDir)
	}
	os.Exit(code)
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adminURL = os.Getenv("TRIAD_TEST_DATABASE_URL")
	if adminURL == "" {
		dir, err := os.MkdirTemp("", "triad-pg-")
		if err != nil {
			return err
		}
		clusterDir = dir
		cluster, err = pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
		if err != nil {
			return err
		}
		adminURL = cluster.URL("postgres")
	}
	template = fmt.Sprintf("triad_tmpl_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	// A connection costs PostgreSQL a fork and tens of milliseconds of CPU on a virtual machine, and
	// every test database is created and dropped: one pool does both for the whole process.
	cfg, err := pgxpool.ParseConfig(adminURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = 4
	if admin, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+template); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, withDatabase(adminURL, template))
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrate.Up(ctx, pool)
}

func withDatabase(raw, db string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

// NewEmptyURL creates a fresh database without any schema for t and returns its connection URL:
// for tests of what a server does on a database it finds empty. It is dropped when t ends.
func NewEmptyURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "template0")
}

// NewURL creates a fresh migrated database for t and returns its connection URL. The database is
// dropped when t ends.
func NewURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "")
}

// newDatabase clones from (the migrated template when empty) into a database dropped when t ends.
func newDatabase(t testing.TB, from string) string {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("dbtest: the package must declare func TestMain(m *testing.M) { dbtest.Main(m) }")
	}
	once.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("dbtest: starting PostgreSQL: %v", setupErr)
	}
	if from == "" {
		from = template
	}
	ctx := context.Background()
	name := fmt.Sprintf("%s_t%d", template, seq.Add(1))
	// Clones of one template are serialised: PostgreSQL refuses a clone while the template is in use.
	createMu.Lock()
	_, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+from+" STRATEGY FILE_COPY")
	createMu.Unlock()
	if err != nil {
		t.Fatalf("dbtest: cloning template: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(adminURL, name)
}

// New creates a fresh migrated database for t and returns a pool on it, closed when t ends.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), NewURL(t))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Outage makes a pool's database unreachable and reachable again, as a PostgreSQL restart or a
// network failure would: while down, every connection the pool has is closed and no new one can
// be opened.
type Outage struct {
	pool *pgxpool.Pool
	down atomic.Bool
}

// Begin cuts the pool off its database.
func (o *Outage) Begin() {
	o.down.Store(true)
	o.pool.Reset()
}

// End lets the pool connect again.
func (o *Outage) End() { o.down.Store(false) }

// NewWithOutage is New with a switch to make the database unreachable, for tests of what users see
// during and after an outage.
func NewWithOutage(t testing.TB) (*pgxpool.Pool, *Outage) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(NewURL(t))
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	o := &Outage{}
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if o.down.Load() {
			return nil, errors.New("dbtest: database unreachable (simulated outage)")
		}
		return d.DialContext(ctx, network, addr)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(pool.Close)
	o.pool = pool
	return pool, o
}
