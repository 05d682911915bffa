package hastack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// node is one PostgreSQL node under its own Patroni.
type node struct {
	s        *Stack
	name     string
	dir      string
	pgPort   int
	restPort int
	config   string
	proc     *proc
}

func (s *Stack) newNode(i int) (*node, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	n := &node{s: s, name: fmt.Sprintf("pg%d", i), dir: filepath.Join(s.dir, fmt.Sprintf("pg%d", i)), pgPort: ports[0], restPort: ports[1]}
	if err := s.mkdir(n.dir); err != nil {
		return nil, err
	}
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return nil, err
	}
	etcd := make([]string, len(s.etcdURL))
	for i, u := range s.etcdURL {
		etcd[i] = strings.TrimPrefix(u, "http://")
	}
	n.config = filepath.Join(n.dir, "patroni.yml")
	// bootstrap.dcs is deploy/patroni/patroni.yml's (Options.DCS): quorum commit, failsafe_mode,
	// the lease and its timing, explained there. watchdog: off here (no /dev/watchdog in a test
	// machine, and the stack's processes are stopped and frozen on purpose); production runs it in
	// "required" mode (deploy/patroni/patroni.yml).
	// pg_rewind (wal_log_hints, data checksums) lets a crashed primary rejoin as a standby.
	// archive_command names the node's own data folder (--pg1-path): PostgreSQL passes %p relative
	// to it, and pgBackRest refuses a relative path under any other pg1-path, so with the stanza's
	// pg1-path (the first node) the second node's archiver failed on every segment while it led,
	// leaving its timeline out of the archive (the restore drill stopped at the promotion).
	yml := fmt.Sprintf(`scope: triad
namespace: /triad-ha/
name: %[1]s
log:
  level: INFO
restapi:
  listen: 127.0.0.1:%[2]d
  connect_address: 127.0.0.1:%[2]d
etcd3:
  hosts: [%[3]s]
bootstrap:
  dcs:
%[4]s  initdb:
    - encoding: UTF8
    - data-checksums
    - no-sync
watchdog:
  mode: "off"
  safety_margin: -1
postgresql:
  listen: 127.0.0.1:%[5]d
  connect_address: 127.0.0.1:%[5]d
  data_dir: %[6]s/data
  bin_dir: %[7]s
  pgpass: %[6]s/pgpass
  basebackup:
    - checkpoint: fast
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: '%[6]s'
    archive_mode: "on"
    archive_command: 'pgbackrest --config=%[8]s --stanza=triad --pg1-path=%[6]s/data archive-push "%%p"'
    logging_collector: "on"
    log_directory: log
    log_filename: postgresql.log
`, n.name, n.restPort, strings.Join(etcd, ", "), indent(s.opts.DCS, "    "),
		n.pgPort, n.dir, bin, s.backrestConf)
	return n, os.WriteFile(n.config, []byte(yml), 0o644)
}

// start runs the node's Patroni (which starts, bootstraps or copies its PostgreSQL).
func (n *node) start() error {
	p, err := n.s.spawn(filepath.Join(n.dir, "patroni.log"), true, filepath.Join(n.s.opts.Patroni, "patroni"), n.config)
	if err != nil {
		return err
	}
	n.proc = p
	return nil
}

// stop stops Patroni, which stops its PostgreSQL.
func (n *node) stop() {
	if n.proc != nil {
		n.proc.stop(syscall.SIGTERM)
	}
	if pid := n.postmaster(); pid > 0 { // a Patroni killed earlier left it running
		_ = syscall.Kill(pid, syscall.SIGQUIT)
	}
}

// postmaster is the node's postmaster's pid (postmaster.pid's first line), or 0.
func (n *node) postmaster() int {
	b, err := os.ReadFile(filepath.Join(n.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if pid > 0 && syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

func (n *node) rest(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", n.restPort, path)
}

// member is one node as Patroni's GET /cluster reports it.
type member struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	State    string `json:"state"`
	Timeline int    `json:"timeline"`
	Lag      any    `json:"lag"`
}

// members asks any node's Patroni for the cluster.
func (s *Stack) members(ctx context.Context) ([]member, error) {
	var last error
	for _, n := range s.nodes {
		var c struct {
			Members []member `json:"members"`
		}
		if err := getJSON(ctx, n.rest("/cluster"), &c); err != nil {
			last = err
			continue
		}
		return c.Members, nil
	}
	return nil, last
}

// Leader is the index of the node that leads now, or an error when none does.
func (s *Stack) Leader(ctx context.Context) (int, error) {
	ms, err := s.members(ctx)
	if err != nil {
		return -1, err
	}
	for _, m := range ms {
		if m.Role == "leader" && m.State == "running" {
			for i, n := range s.nodes {
				if n.name == m.Name {
					return i, nil
				}
			}
		}
	}
	return -1, fmt.Errorf("no running leader: %+v", ms)
}

func (s *Stack) waitLeader(ctx context.Context) error {
	return waitFor(ctx, patience.Bound(2*time.Minute), func() error {
		i, err := s.Leader(ctx)
		if err != nil {
			return err
		}
		return s.exec(ctx, s.nodeURL(s.nodes[i], "postgres"), "SELECT 1")
	})
}

// WaitHealthy waits until every node runs, one leads and every other is a quorum standby (its
// acknowledgement counts for a commit): the state each fault starts from.
func (s *Stack) WaitHealthy(ctx context.Context) error {
	return waitFor(ctx, patience.Bound(2*time.Minute), func() error {
		ms, err := s.members(ctx)
		if err != nil {
			return err
		}
		var leader, sync, running int
		for _, m := range ms {
			if m.State == "running" || m.State == "streaming" {
				running++
				switch m.Role {
				case "leader":
					leader++
				case "sync_standby", "quorum_standby":
					sync++
				}
			}
		}
		if leader != 1 || sync != len(s.nodes)-1 || running != len(s.nodes) {
			return fmt.Errorf("not healthy yet: %+v", ms)
		}
		return nil
	})
}

// KillLeader is a crash of the leader's machine: kill -9 of its Patroni and its postmaster at
// once, so nothing renews the leader key and nothing shuts down cleanly. It returns the node's
// index; RestartNode brings it back (as a standby, rewound if it had diverged).
func (s *Stack) KillLeader(ctx context.Context) (int, error) {
	i, err := s.Leader(ctx)
	if err != nil {
		return -1, err
	}
	s.crash(i)
	return i, nil
}

// crash is kill -9 of node i's Patroni and postmaster at once.
func (s *Stack) crash(i int) {
	n := s.nodes[i]
	pm := n.postmaster()
	_ = n.proc.cmd.Process.Signal(syscall.SIGKILL)
	if pm > 0 {
		_ = syscall.Kill(pm, syscall.SIGKILL)
	}
	<-n.proc.done
}

// RestartNode starts node i's Patroni again after KillLeader.
func (s *Stack) RestartNode(i int) error {
	n := s.nodes[i]
	if pm := n.postmaster(); pm > 0 { // the postmaster's children may outlive it a moment
		_ = syscall.Kill(pm, syscall.SIGKILL)
	}
	return n.start()
}

// checkPatroni makes sure dir holds a Patroni of major version 4 or later: 3.0.2's etcd3 leader
// update wrote the leader key back unconditionally, so a primary that stalled past its lease
// took the key back from the standby promoted meanwhile, and what that one had acknowledged was
// rewound away (docs/replicas.md, "Which Patroni").
func checkPatroni(dir string) error {
	if dir == "" {
		return errors.New("hastack: Options.Patroni is not set (scripts/ensure-patroni.sh's var/patroni/bin)")
	}
	out, err := exec.Command(filepath.Join(dir, "patroni"), "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("hastack: %s/patroni --version: %w: %s (make deps-ha fetches it)", dir, err, out)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "patroni ")
	major, _, _ := strings.Cut(v, ".")
	if m, err := strconv.Atoi(major); err != nil || m < 4 {
		return fmt.Errorf("hastack: %s/patroni is %q, want 4 or later", dir, v)
	}
	return nil
}

// PatroniDCS reads the bootstrap.dcs section of the Patroni configuration at path (the shipped
// deploy/patroni/patroni.yml): the cluster-wide settings a stack runs as they are.
func PatroniDCS(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Bootstrap struct {
			DCS map[string]any `yaml:"dcs"`
		} `yaml:"bootstrap"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("hastack: %s: %w", path, err)
	}
	if len(doc.Bootstrap.DCS) == 0 {
		return "", fmt.Errorf("hastack: %s has no bootstrap.dcs", path)
	}
	out, err := yaml.Marshal(doc.Bootstrap.DCS)
	return string(out), err
}

// LeaderTTL is the lease of Patroni's leader key (the DCS settings' ttl): how long a crashed
// leader's key outlives it.
func (s *Stack) LeaderTTL() (time.Duration, error) {
	var dcs struct {
		TTL int `yaml:"ttl"`
	}
	if err := yaml.Unmarshal([]byte(s.opts.DCS), &dcs); err != nil || dcs.TTL <= 0 {
		return 0, fmt.Errorf("hastack: no ttl in the DCS settings (%v)", err)
	}
	return time.Duration(dcs.TTL) * time.Second, nil
}

// indent puts prefix before every line of text.
func indent(text, prefix string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
