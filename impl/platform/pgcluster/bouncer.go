package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoBouncer means PgBouncer is not installed (scripts/ensure-pgbouncer.sh installs Debian's).
var ErrNoBouncer = errors.New("pgcluster: pgbouncer not found; install it with `apt-get install pgbouncer` (make deps-pgbouncer)")

// bouncerPort names PgBouncer's socket file (.s.PGSQL.6432) inside its own folder; it never
// listens on TCP, so the number takes no port on the machine.
const bouncerPort = 6432

// Bouncer is a PgBouncer in transaction mode in front of one PostgreSQL server, as deployments
// run it when their replicas outnumber the server's connections. Apart from the pool mode and
// where it listens, its settings are PgBouncer's defaults: it does not ignore any startup
// parameter, and a server connection serves whichever client has a transaction to run.
type Bouncer struct {
	dir   string
	bin   string
	cred  *syscall.Credential
	probe string // a URL through it, for its readiness
	cmd   *exec.Cmd
	done  chan struct{}
	log   string
}

// StartBouncer runs PgBouncer from the folder dir (created, and given to the postgres system user
// when this process is root: PgBouncer refuses to run as root) in front of the server backendURL
// reaches, for every database of that server, with trust authentication for users (the backend
// checks them). It listens on a unix socket in dir only.
func StartBouncer(ctx context.Context, dir, backendURL string, users ...string) (*Bouncer, error) {
	return StartBouncerWith(ctx, dir, backendURL, "", users...)
}

// StartBouncerWith is StartBouncer with settings, lines of PgBouncer's [pgbouncer] section
// (`name = value`), added after its own: what a deployment tunes (deploy/pgbouncer/pgbouncer.ini).
// They must not set where it listens, its authentication or its log, which are the bouncer's own.
func StartBouncerWith(ctx context.Context, dir, backendURL, settings string, users ...string) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			return nil, ErrNoBouncer
		}
		bin = "/usr/sbin/pgbouncer"
	}
	backend, err := pgconn.ParseConfig(backendURL)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: bouncer backend: %w", err)
	}
	cred, err := SystemUser()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cred: cred}
	if err := c.mkdirOwned(dir); err != nil {
		return nil, err
	}
	var auth strings.Builder
	for _, u := range append([]string{backend.User}, users...) {
		fmt.Fprintf(&auth, "%q \"\"\n", u)
	}
	b := &Bouncer{dir: dir, bin: bin, cred: cred, log: filepath.Join(dir, "pgbouncer.log")}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%d
[pgbouncer]
unix_socket_dir = %s
listen_addr =
listen_port = %d
auth_type = trust
auth_file = %s
pool_mode = transaction
logfile = %s
%s
`, backend.Host, backend.Port, dir, bouncerPort, filepath.Join(dir, "users.txt"), b.log, settings)
	for name, text := range map[string]string{"users.txt": auth.String(), "pgbouncer.ini": ini} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	b.probe = b.URL(backend.User, backend.Database)
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// Restart stops PgBouncer (its clients' connections close) and starts it again with the same
// settings, as an operator's restart or a pod's replacement would.
func (b *Bouncer) Restart(ctx context.Context) error {
	if err := b.Stop(); err != nil {
		return err
	}
	return b.start(ctx)
}

// start runs PgBouncer from its folder's pgbouncer.ini and waits until a query goes through it.
func (b *Bouncer) start(ctx context.Context) error {
	b.done = make(chan struct{})
	b.cmd = exec.Command(b.bin, filepath.Join(b.dir, "pgbouncer.ini"))
	b.cmd.Dir = b.dir
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: b.cred}
	if err := b.cmd.Start(); err != nil {
		return fmt.Errorf("pgcluster: pgbouncer: %w", err)
	}
	done := b.done
	go func() {
		_ = b.cmd.Wait()
		close(done)
	}()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		err := func() error {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			conn, err := pgx.Connect(cctx, b.probe)
			if err != nil {
				return err
			}
			defer conn.Close(cctx)
			_, err = conn.Exec(cctx, "SELECT 1")
			return err
		}()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("pgcluster: pgbouncer exited: %s", b.Log())
		default:
		}
		if time.Since(start) > 30*time.Second || ctx.Err() != nil {
			_ = b.Stop()
			return fmt.Errorf("pgcluster: pgbouncer not ready: %w; log: %s", err, b.Log())
		}
	}
}

// URL is a connection URL for database db as user through the bouncer.
func (b *Bouncer) URL(user, db string) string {
	q := url.Values{}
	q.Set("host", b.dir)
	q.Set("port", fmt.Sprint(bouncerPort))
	q.Set("sslmode", "disable")
	return (&url.URL{Scheme: "postgres", User: url.User(user), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Log is what PgBouncer logged so far.
func (b *Bouncer) Log() string {
	out, _ := os.ReadFile(b.log)
	return string(out)
}

// Stop shuts PgBouncer down at once (SIGTERM: its clients' connections close) and waits for it.
func (b *Bouncer) Stop() error {
	select {
	case <-b.done:
		return nil
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	return nil
}
