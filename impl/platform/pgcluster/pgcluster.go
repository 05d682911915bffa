// Package pgcluster runs a private PostgreSQL cluster from the binaries installed on the machine.
//
// The server uses it when no DATABASE_URL is configured, and the test harness uses it to give every
// test process a database server of its own. The cluster listens on a unix socket inside its own
// folder only (no TCP port), so several clusters never fight over a port.
//
// One folder has one owner: Start takes a lock file holding the owner's pid, so a second process
// pointed at the same folder refuses instead of adopting (and later stopping) a cluster another
// server relies on. The postmaster runs as a child of the owner, which supervises it: when it
// dies, it is restarted with backoff.
package pgcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrInUse means another live process owns the cluster's folder (its lock file is held).
var ErrInUse = errors.New("pgcluster: data folder in use")

// Options tune a cluster. The zero value is a durable cluster suitable for development.
type Options struct {
	// Ephemeral turns off fsync and friends: for test clusters whose data may be lost.
	Ephemeral bool
	// MaxConnections is a new cluster's max_connections; 0 means 200. A cluster shared by a whole
	// test run (cmd/testrun), whose packages each start servers with pools of their own, needs more.
	MaxConnections int
	// StandbyOf, a URL of another cluster's database, makes a new cluster a hot standby of that
	// one: its data is copied with `pg_basebackup -R`, which sets it streaming from there, instead
	// of made by initdb. It serves reads only, and lags its primary by the replay delay.
	StandbyOf string
	// Log receives the cluster's progress lines; nil discards them.
	Log func(format string, args ...any)
	// Warn receives what an operator must notice (the postmaster died, a restart failed); nil
	// sends it to Log.
	Warn func(format string, args ...any)
}

// Backoff between restarts of a postmaster that died: the first retry comes quickly, repeated
// failures (a disk full, shared memory still held by dying backends) are retried less often.
const (
	minRestartBackoff = 500 * time.Millisecond
	maxRestartBackoff = 30 * time.Second
)

// Cluster is a running PostgreSQL server owned by this process.
type Cluster struct {
	dir   string
	bin   string
	conns int // max_connections of a new cluster
	cred  *syscall.Credential
	logf  func(string, ...any)
	warnf func(string, ...any)
	lock  *os.File // held for the cluster's lifetime; the kernel releases it if the process dies

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed when the supervisor has shut the postmaster down
	stopErr  error
}

// Start initialises the cluster in dir when it holds none yet, then starts it. Data in dir survives
// restarts. When the process runs as root, the server runs as the `postgres` system user, because
// PostgreSQL refuses to run as root.
func Start(ctx context.Context, dir string, opts Options) (*Cluster, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, conns: cmp.Or(opts.MaxConnections, 200), logf: opts.Log, warnf: opts.Warn, stop: make(chan struct{}), done: make(chan struct{})}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	if c.warnf == nil {
		c.warnf = c.logf
	}
	if os.Geteuid() == 0 {
		cred, err := postgresCredential()
		if err != nil {
			return nil, err
		}
		c.cred = cred
	}
	if err := c.mkdirOwned(dir); err != nil {
		return nil, err
	}
	if c.lock, err = lockDir(dir); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.lock.Close()
		}
	}()
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		init := func() error { return c.initdb(ctx, opts.Ephemeral) }
		if opts.StandbyOf != "" {
			init = func() error { return c.basebackup(ctx, opts.StandbyOf) }
		}
		if err := init(); err != nil {
			return nil, err
		}
	}
	// We hold the lock, so a postmaster still running here belongs to an owner that died: take it
	// over by stopping it cleanly and starting our own, which we can supervise.
	if c.command(ctx, "pg_ctl", "-D", c.dataDir(), "status").Run() == nil {
		c.warnf("postgres in %s was left running by a server that is gone: stopping it to take over", c.dataDir())
		if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
			return nil, err
		}
	}
	proc, exited, err := c.startPostmaster(ctx)
	if err != nil {
		return nil, err
	}
	c.logf("postgres started (pid %d): data %s, socket %s", proc.Process.Pid, c.dataDir(), c.socketDir())
	ok = true
	go c.supervise(proc, exited)
	return c, nil
}

// lockDir takes the folder's lock file and writes our pid into it. flock, not the file's mere
// existence, is the lock: the kernel drops it when the owner dies however it dies, so a crashed
// owner never blocks the next start, while a live one always does.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "owner.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner, _ := os.ReadFile(path)
			return nil, fmt.Errorf("%w: %s is owned by the running server with pid %s (lock file %s); stop that server or use another data folder",
				ErrInUse, dir, strings.TrimSpace(string(owner)), path)
		}
		return nil, fmt.Errorf("pgcluster: lock file: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (c *Cluster) dataDir() string   { return filepath.Join(c.dir, "data") }
func (c *Cluster) socketDir() string { return c.dir }

// Dir is the folder that holds the cluster's data and socket.
func (c *Cluster) Dir() string { return c.dir }

// URL returns a connection URL for database db over the cluster's unix socket.
func (c *Cluster) URL(db string) string {
	q := url.Values{}
	q.Set("host", c.socketDir())
	q.Set("sslmode", "disable")
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// EnsureDatabase creates database name when it does not exist yet.
func (c *Cluster) EnsureDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// Stop shuts the server down, letting it finish writing its data, and releases the folder. It is
// safe to call twice.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	c.stopOnce.Do(func() {
		close(c.stop)
		<-c.done
		c.lock.Close()
	})
	return c.stopErr
}
