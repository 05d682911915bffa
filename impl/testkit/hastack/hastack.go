// Package hastack runs a highly available PostgreSQL on one machine from Debian's packages, as a
// production deployment of triad runs it across machines: three etcd members, Patroni 4 managing
// three PostgreSQL nodes with quorum commit and failsafe_mode, HAProxy routing to the primary and to the
// standbys by Patroni's REST checks, PgBouncer in transaction mode in front of the primary's port,
// and pgBackRest archiving WAL from whichever node is primary. `make run-ha` and `make test-ha`
// (e2e/ha_test.go) start it; docs/replicas.md, "High availability", describes it and the faults it
// rides through.
//
// Everything listens on loopback, on ports picked free at start; PostgreSQL, Patroni, PgBouncer and
// pgBackRest run as the postgres system user when this process is root (PostgreSQL refuses root).
package hastack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/platform/pgcluster"
)

// Options configure Start.
type Options struct {
	// Nodes is the number of PostgreSQL nodes Patroni manages (at least 3, 3 when 0: quorum commit
	// on two of them survives the loss of any one).
	Nodes int
	// DCS is Patroni's cluster-wide settings (bootstrap.dcs), YAML: PatroniDCS reads them from
	// deploy/patroni/patroni.yml.
	DCS string
	// Patroni is the folder holding the patroni and patronictl programs: scripts/ensure-patroni.sh's
	// var/patroni/bin (Debian trixie's Patroni 4; bookworm's 3.0.2 is refused).
	Patroni string
	// BouncerSettings are PgBouncer's tuning lines (BouncerSettings reads them from
	// deploy/pgbouncer/pgbouncer.ini).
	BouncerSettings string
	// AppRole is a login role created for the servers (the row-only role), besides postgres.
	AppRole string
	// Log, when set, gets a line at each step.
	Log func(format string, args ...any)
}

// Stack is a running HA PostgreSQL: see the package comment.
type Stack struct {
	dir          string
	cred         *syscall.Credential
	opts         Options
	etcd         []*proc
	etcdURL      []string // client URLs
	nodes        []*node
	proxy        *proc // HAProxy before the nodes
	primary      int   // HAProxy's primary port (Patroni's GET /primary)
	replica      int   // HAProxy's standby port (GET /replica)
	bouncer      *pgcluster.Bouncer
	backrestConf string // pgbackrest.conf
}

// Start brings the stack up under dir (created; under a short path: unix sockets live there) and
// returns once the primary accepts writes, every standby is a quorum member, the first full backup
// is taken and PgBouncer answers. ctx bounds the start only.
func Start(ctx context.Context, dir string, opts Options) (_ *Stack, err error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Nodes < 3 {
		return nil, errors.New("hastack: at least 3 PostgreSQL nodes (quorum commit on two survives the loss of one)")
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	for _, bin := range []string{"etcd", "pgbackrest", "haproxy"} {
		if lookPath(bin) == "" {
			return nil, fmt.Errorf("hastack: %s is missing: make deps-ha installs Debian's", bin)
		}
	}
	if err := checkPatroni(opts.Patroni); err != nil {
		return nil, err
	}
	if opts.DCS == "" {
		return nil, errors.New("hastack: Options.DCS is not set (PatroniDCS reads deploy/patroni/patroni.yml's)")
	}
	cred, err := pgcluster.SystemUser()
	if err != nil {
		return nil, err
	}
	s := &Stack{dir: dir, cred: cred, opts: opts}
	if err := s.mkdir(dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err := s.startEtcd(ctx); err != nil {
		return nil, err
	}
	opts.Log("etcd: 3 members up")
	if err := s.writeBackrestConfig(); err != nil {
		return nil, err
	}
	for i := range opts.Nodes {
		n, err := s.newNode(i)
		if err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, n)
	}
	if err := s.finishBackrestConfig(); err != nil {
		return nil, err
	}
	// The first node bootstraps the cluster; the others copy it once it leads.
	if err := s.nodes[0].start(); err != nil {
		return nil, err
	}
	if err := s.waitLeader(ctx); err != nil {
		return nil, err
	}
	opts.Log("patroni: %s leads", s.nodes[0].name)
	if err := s.backrest(ctx, "stanza-create"); err != nil {
		return nil, err
	}
	if err := s.setupDatabase(ctx); err != nil {
		return nil, err
	}
	for _, n := range s.nodes[1:] {
		if err := n.start(); err != nil {
			return nil, err
		}
	}
	if err := s.WaitHealthy(ctx); err != nil {
		return nil, err
	}
	opts.Log("patroni: %d nodes, every standby a quorum member", opts.Nodes)
	if err := s.startProxy(ctx); err != nil {
		return nil, err
	}
	if err := s.backrest(ctx, "backup", "--type=full"); err != nil {
		return nil, err
	}
	opts.Log("pgbackrest: full backup taken, WAL archiving")
	s.bouncer, err = pgcluster.StartBouncerWith(ctx, filepath.Join(dir, "b"),
		fmt.Sprintf("postgres://postgres@127.0.0.1:%d/triad?sslmode=disable", s.primary), opts.BouncerSettings+"admin_users = postgres\n", opts.AppRole)
	if err != nil {
		return nil, err
	}
	opts.Log("pgbouncer: transaction mode in front of HAProxy's primary port")
	return s, nil
}

// Stop stops everything it started: PgBouncer, HAProxy, Patroni and PostgreSQL, etcd.
func (s *Stack) Stop() {
	if s.bouncer != nil {
		_ = s.bouncer.Stop()
	}
	if s.proxy != nil {
		s.proxy.stop(syscall.SIGTERM)
	}
	var wg sync.WaitGroup
	for _, n := range s.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.stop() }()
	}
	wg.Wait()
	for _, e := range s.etcd {
		e.stop(syscall.SIGTERM)
	}
}

// PooledURL is the database through PgBouncer as user: the servers' DATABASE_URL.
func (s *Stack) PooledURL(user string) string { return s.bouncer.URL(user, "triad") }

// DirectURL is every node in one multi-host URL that connects to whichever is primary
// (target_session_attrs=read-write): the servers' DATABASE_DIRECT_URL.
func (s *Stack) DirectURL(user string) string {
	hosts := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", n.pgPort)
	}
	return fmt.Sprintf("postgres://%s@%s/triad?sslmode=disable&target_session_attrs=read-write&connect_timeout=2", user, strings.Join(hosts, ","))
}

// ReadURL is HAProxy's standby port as user: the servers' DATABASE_READ_URL.
func (s *Stack) ReadURL(user string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/triad?sslmode=disable&connect_timeout=2", user, s.replica)
}

// Bouncer is the PgBouncer in front of the primary.
func (s *Stack) Bouncer() *pgcluster.Bouncer { return s.bouncer }

// Logs is the tail of every component's log, for a failure's report.
func (s *Stack) Logs() string {
	var b strings.Builder
	for _, n := range s.nodes {
		fmt.Fprintf(&b, "--- patroni %s\n%s\n", n.name, tail(n.proc.logPath, 40))
		fmt.Fprintf(&b, "--- postgres %s\n%s\n", n.name, tail(filepath.Join(n.dir, "data", "log", "postgresql.log"), 20))
	}
	if s.proxy != nil {
		fmt.Fprintf(&b, "--- haproxy\n%s\n", tail(s.proxy.logPath, 20))
	}
	if s.bouncer != nil {
		fmt.Fprintf(&b, "--- pgbouncer\n%s\n", lastLines(s.bouncer.Log(), 20))
	}
	return b.String()
}

// BouncerSettings reads the [pgbouncer] section of the ini file at path (the shipped
// deploy/pgbouncer/pgbouncer.ini) without the settings that say where it listens and how it
// authenticates, which a stack sets for itself.
func BouncerSettings(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	own := map[string]bool{"listen_addr": true, "listen_port": true, "auth_type": true, "auth_file": true, "unix_socket_dir": true, "logfile": true, "pidfile": true}
	var out strings.Builder
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, ";") || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[pgbouncer]":
			k, _, _ := strings.Cut(line, "=")
			if !own[strings.TrimSpace(k)] {
				out.WriteString(line + "\n")
			}
		}
	}
	return out.String(), sc.Err()
}

// mkdir makes dir for the postgres system user.
func (s *Stack) mkdir(dir string) error {
	// Folders above it that do not exist yet (make run-ha's ./var on a fresh clone) are made
	// traversable: made 0700 by root, they kept the postgres user out of everything below.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if s.cred != nil {
		return os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

// freePorts asks the kernel for n free loopback ports at once (all held until all are known, so
// they differ); another process could take one before it is used.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

func lookPath(bin string) string {
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/" + bin); err == nil {
		return "/usr/sbin/" + bin
	}
	return ""
}

// proc is one process of the stack, its output in a log file.
type proc struct {
	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
}

// spawn starts name with args, as the postgres user when asUser, in a process group of its own.
func (s *Stack) spawn(logPath string, asUser bool, name string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := name
	if !filepath.IsAbs(name) {
		path = lookPath(name)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if asUser {
		cmd.SysProcAttr.Credential = s.cred
		cmd.Env = append(os.Environ(), "HOME="+s.dir)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("hastack: %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends sig and waits up to 15 s, then kills the process group.
func (p *proc) stop(sig syscall.Signal) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// alive reports whether the process still runs.
func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
