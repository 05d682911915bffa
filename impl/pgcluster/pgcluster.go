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
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrInUse means another live process owns the cluster's folder (its lock file is held).
var ErrInUse = errors.New("pgcluster: data folder in use")

// ErrNoBinaries means no PostgreSQL server binaries were found on this machine.
var ErrNoBinaries = errors.New("pgcluster: PostgreSQL binaries (initdb, pg_ctl, postgres) not found; " +
	"install them with `apt-get install postgresql` or set DATABASE_URL to an existing server")

// Options tune a cluster. The zero value is a durable cluster suitable for development.
type Options struct {
	// Ephemeral turns off fsync and friends: for test clusters whose data may be lost.
	Ephemeral bool
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
	cred  *syscall.Credential
	logf  func(string, ...any)
	warnf func(string, ...any)
	lock  *os.File // held for the cluster's lifetime; the kernel releases it if the process dies

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed when the supervisor has shut the postmaster down
	stopErr  error
}

// FindBinaries returns the folder holding initdb, pg_ctl and postgres: PATH first, then
// `pg_config --bindir`, then the newest /usr/lib/postgresql/*/bin.
func FindBinaries() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(real))
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return pgMajor(versions[i]) > pgMajor(versions[j]) })
	candidates = append(candidates, versions...)
	return firstWithBinaries(candidates)
}

// firstWithBinaries returns the first folder that holds all three server programs.
func firstWithBinaries(candidates []string) (string, error) {
	for _, dir := range candidates {
		if isExec(filepath.Join(dir, "initdb")) && isExec(filepath.Join(dir, "pg_ctl")) && isExec(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
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
	c := &Cluster{dir: dir, bin: bin, logf: opts.Log, warnf: opts.Warn, stop: make(chan struct{}), done: make(chan struct{})}
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
		if err := c.initdb(ctx, opts.Ephemeral); err != nil {
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

// startPostmaster runs postgres as our child and waits until it accepts connections. exited is
// closed when the process ends.
func (c *Cluster) startPostmaster(ctx context.Context) (*exec.Cmd, chan struct{}, error) {
	logFile := filepath.Join(c.dir, "server.log")
	out, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.dataDir())
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own: a Ctrl-C in the terminal goes to the server, which drains its
	// requests and then stops PostgreSQL, instead of PostgreSQL dying under it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("pgcluster: postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(exited)
	}()
	if err := c.waitReady(ctx, exited); err != nil {
		// A stop can arrive while a restarted postmaster is still replaying its WAL, or just after
		// it began accepting connections: a clean shutdown leaves no stale postmaster.pid behind
		// for the next owner to wonder about, where a kill would.
		_ = c.shutdown(cmd, exited)
		return nil, nil, fmt.Errorf("%w (log: %s)", err, logFile)
	}
	return cmd, exited, nil
}

// supervise restarts the postmaster whenever it dies, until Stop, then shuts it down.
func (c *Cluster) supervise(proc *exec.Cmd, exited chan struct{}) {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-c.stop:
			c.stopErr = c.shutdown(proc, exited)
			return
		case <-exited:
		}
		backoff := minRestartBackoff
		c.warnf("postgres (pid %d) died: %s; restarting in %s", proc.Process.Pid, proc.ProcessState, backoff)
		for {
			select {
			case <-c.stop:
				return
			case <-time.After(backoff):
			}
			var err error
			if proc, exited, err = c.startPostmaster(ctx); err == nil {
				c.warnf("postgres restarted (pid %d)", proc.Process.Pid)
				break
			}
			if ctx.Err() != nil {
				return
			}
			backoff = min(2*backoff, maxRestartBackoff)
			c.warnf("restarting postgres failed: %v; next try in %s", err, backoff)
		}
	}
}

// shutdown asks the postmaster for a fast shutdown (abort open transactions, checkpoint, exit) and
// waits for it, killing it when it does not finish within a minute.
func (c *Cluster) shutdown(proc *exec.Cmd, exited chan struct{}) error {
	_ = proc.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
		c.logf("postgres stopped")
		return nil
	case <-time.After(time.Minute):
		_ = proc.Process.Kill()
		<-exited
		return errors.New("pgcluster: postgres did not stop within a minute; killed")
	}
}

func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root needs the `postgres` system user (apt-get install postgresql creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (c *Cluster) dataDir() string   { return filepath.Join(c.dir, "data") }
func (c *Cluster) socketDir() string { return c.dir }

// mkdirOwned creates dir (and its parents) and hands dir to the server's user, so a root-owned
// process can keep a cluster in its own data folder.
func (c *Cluster) mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return err
		}
		// The postgres user must be able to reach the folder through its parents.
		for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			if fi.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	out, err := c.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) initdb(ctx context.Context, ephemeral bool) error {
	args := []string{"-D", c.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"}
	if ephemeral {
		args = append(args, "--no-sync")
	}
	if err := c.run(ctx, "initdb", args...); err != nil {
		return err
	}
	// listen_addresses='' keeps the server off TCP entirely: only the socket in our folder.
	conf := fmt.Sprintf("\nlisten_addresses = ''\nunix_socket_directories = '%s'\nmax_connections = 200\n", c.socketDir())
	if ephemeral {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
	}
	f, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// waitReady polls until the server accepts connections, it exits, or 60 s pass.
func (c *Cluster) waitReady(ctx context.Context, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgcluster: server did not accept connections: %w", err)
		}
		select {
		case <-exited:
			return errors.New("pgcluster: postgres exited while starting")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

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
