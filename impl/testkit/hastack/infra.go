package hastack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// startEtcd starts three etcd members on loopback and waits until each reports itself healthy.
// Patroni keeps its leader key there, under a lease of Patroni's ttl.
func (s *Stack) startEtcd(ctx context.Context) error {
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("e%d=http://127.0.0.1:%d", i, ports[3+i]))
	}
	for i := range 3 {
		client, peer := fmt.Sprintf("http://127.0.0.1:%d", ports[i]), fmt.Sprintf("http://127.0.0.1:%d", ports[3+i])
		data := filepath.Join(s.dir, fmt.Sprintf("etcd%d", i))
		if err := s.mkdir(data); err != nil {
			return err
		}
		p, err := s.spawn(data+".log", true, "etcd", "--name", fmt.Sprintf("e%d", i), "--data-dir", data,
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "triad-ha", "--logger", "zap", "--log-level", "warn")
		if err != nil {
			return err
		}
		s.etcd = append(s.etcd, p)
		s.etcdURL = append(s.etcdURL, client)
	}
	for i, u := range s.etcdURL {
		if err := waitFor(ctx, 60*time.Second, func() error {
			var h struct {
				Health string `json:"health"`
			}
			if err := getJSON(ctx, u+"/health", &h); err != nil {
				return err
			}
			if h.Health != "true" {
				return fmt.Errorf("health %q", h.Health)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("hastack: etcd member %d: %w; log: %s", i, err, tail(s.etcd[i].logPath, 20))
		}
	}
	return nil
}

// startProxy starts HAProxy before the nodes with two ports: the primary's (the node whose Patroni
// answers GET /primary 200) and the standbys' (GET /replica 200). Each node's Patroni is asked
// every 250 ms while it is in, every 100 ms while it is out or after a failed check; two failed
// checks take a node out and one good one puts it in (a new primary is in within 100 ms of taking
// the leader key); a node taken out has its connections cut (on-marked-down shutdown-sessions), so
// a pooler holding connections to a demoted primary finds them closed instead of writing into a
// read-only standby. State changes are logged with their time; the stats socket tells Switchover
// where the primary port leads.
func (s *Stack) startProxy(ctx context.Context) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	s.primary, s.replica = ports[0], ports[1]
	var b strings.Builder
	fmt.Fprintf(&b, `global
	maxconn 2000
	log stderr format iso local0 notice
	stats socket %s mode 600 level admin
defaults
	log global
	mode tcp
	timeout connect 2s
	timeout client 30m
	timeout server 30m
	timeout check 1s
`, filepath.Join(s.dir, "haproxy.sock"))
	for _, l := range []struct {
		name  string
		port  int
		check string
	}{{"primary", s.primary, "/primary"}, {"replicas", s.replica, "/replica"}} {
		fmt.Fprintf(&b, `listen %s
	bind 127.0.0.1:%d
	balance roundrobin
	option httpchk OPTIONS %s
	http-check expect status 200
	default-server inter 250ms fastinter 100ms downinter 100ms fall 2 rise 1 on-marked-down shutdown-sessions
`, l.name, l.port, l.check)
		for _, n := range s.nodes {
			fmt.Fprintf(&b, "\tserver %s 127.0.0.1:%d check port %d\n", n.name, n.pgPort, n.restPort)
		}
	}
	cfg := filepath.Join(s.dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		return err
	}
	if s.proxy, err = s.spawn(filepath.Join(s.dir, "haproxy.log"), false, "haproxy", "-db", "-f", cfg); err != nil {
		return err
	}
	// Ready when a session through the primary port can write.
	return waitFor(ctx, 30*time.Second, func() error {
		return s.exec(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2&target_session_attrs=read-write", s.primary), "SELECT 1")
	})
}

// setupDatabase makes triad's database and the servers' role on the primary.
func (s *Stack) setupDatabase(ctx context.Context) error {
	admin := s.nodeURL(s.nodes[0], "postgres")
	stmts := []string{"CREATE DATABASE triad"}
	if s.opts.AppRole != "" {
		stmts = append(stmts, "CREATE ROLE "+pgx.Identifier{s.opts.AppRole}.Sanitize()+" LOGIN")
	}
	for _, q := range stmts {
		if err := s.exec(ctx, admin, q); err != nil {
			return fmt.Errorf("hastack: %s: %w", q, err)
		}
	}
	return nil
}

// OwnerURL is the triad database on the primary as postgres, the tables' owner: for
// `server -mode migrate` and the test's own reads (through every node, to the primary).
func (s *Stack) OwnerURL() string { return s.DirectURL("postgres") }

// nodeURL is database db on node n itself, as postgres.
func (s *Stack) nodeURL(n *node, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", n.pgPort, db)
}

// exec runs one statement on a connection of its own.
func (s *Stack) exec(ctx context.Context, url, sql string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(cctx))
	_, err = conn.Exec(cctx, sql)
	return err
}

// waitFor calls f every 100 ms until it returns nil, ctx ends or within has passed.
func waitFor(ctx context.Context, within time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", within, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// getJSON GETs url into v (any status: Patroni's health answers carry the state with 503 too).
func getJSON(ctx context.Context, url string, v any) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
