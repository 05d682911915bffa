// Package pgcluster runs a private PostgreSQL cluster from the binaries installed on the machine.
//
// The server uses it when no DATABASE_URL is configured, and the test harness uses it to give every
// test process a database server of its own. The cluster listens on a unix socket inside its own
// folder only (no TCP port), so several clusters never fight over a port.
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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries means no PostgreSQL server binaries were found on this machine.
var ErrNoBinaries = errors.New("pgcluster: PostgreSQL binaries (initdb, pg_ctl, postgres) not found; " +
	"install them with `apt-get install postgresql` or set DATABASE_URL to an existing server")

// Options tune a cluster. The zero value is a durable cluster suitable for development.
type Options struct {
	// Ephemeral turns off fsync and friends: for test clusters whose data may be lost.
	Ephemeral bool
	// Log receives the server's log lines; nil discards them.
	Log func(format string, args ...any)
}

// Cluster is a running PostgreSQL server owned by this process.
type Cluster struct {
	dir     string
	bin     string
	cred    *syscall.Credential
	logf    func(string, ...any)
	stopped bool
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
	c := &Cluster{dir: dir, bin: bin, logf: opts.Log}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
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
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx, opts.Ephemeral); err != nil {
			return nil, err
		}
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
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

func (c *Cluster) start(ctx context.Context) error {
	// A server left running by a crashed run of ours is adopted rather than fought with; a stale
	// pid file with no server behind it is pg_ctl's to clean up.
	if c.command(ctx, "pg_ctl", "-D", c.dataDir(), "status").Run() == nil {
		c.logf("postgres already running in %s: adopting it", c.dataDir())
		return c.waitReady(ctx)
	}
	logFile := filepath.Join(c.dir, "server.log")
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-l", logFile, "-w", "-t", "60", "start"); err != nil {
		return err
	}
	c.logf("postgres started: data %s, socket %s", c.dataDir(), c.socketDir())
	return c.waitReady(ctx)
}

func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgcluster: server did not accept connections: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
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

// Stop shuts the server down, letting it finish writing its data. It is safe to call twice.
func (c *Cluster) Stop() error {
	if c == nil || c.stopped {
		return nil
	}
	c.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-m", "fast", "-w", "stop"); err != nil {
		return err
	}
	c.logf("postgres stopped")
	return nil
}
