package hastack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/platform/pgcluster"
)

// Switchover is a planned change of leader as an operator does it: a CHECKPOINT while clients
// still work (so that the leader's own, before it stops, is short), PgBouncer's PAUSE (queries
// wait in it instead of failing), Patroni's switchover to a quorum standby (POST
// /switchover: the leader stops its PostgreSQL, the standby is promoted, the old leader follows
// it), and RESUME as soon as HAProxy's primary port leads to the new primary and nowhere else.
//
// Without the PAUSE clients fail from the moment the leader stops until PgBouncer's next login
// reaches the new primary: PgBouncer answers every query at once with "pgbouncer cannot connect
// to server" while its last login failed and it holds no server connection. That took 1.7-2.1 s
// here, most of it Patroni's: it learns that PostgreSQL has stopped by reading pg_control once a
// second, and only then releases the leader key for the standby to take (docs/replicas.md).
func (s *Stack) Switchover(ctx context.Context) error {
	i, err := s.Leader(ctx)
	if err != nil {
		return err
	}
	ms, err := s.members(ctx)
	if err != nil {
		return err
	}
	candidate := ""
	for _, m := range ms {
		if m.Role == "sync_standby" || m.Role == "quorum_standby" {
			candidate = m.Name
		}
	}
	if candidate == "" {
		return fmt.Errorf("hastack: no quorum standby to switch over to: %+v", ms)
	}
	if err := s.exec(ctx, s.nodeURL(s.nodes[i], "postgres"), "CHECKPOINT"); err != nil {
		return err
	}
	resume, err := s.holdClients(ctx)
	if err != nil {
		return err
	}
	held := time.Now()
	body, _ := json.Marshal(map[string]string{"leader": s.nodes[i].name, "candidate": candidate})
	done := make(chan error, 1)
	go func() { done <- send(ctx, http.MethodPost, s.nodes[i].rest("/switchover"), body) }()
	// Patroni's answer comes on its next whole second of polling after the change; HAProxy's
	// primary port, checked every 100 ms while a node is down, tells sooner.
	answered, err := s.waitPrimaryRoute(ctx, candidate, done)
	resume()
	s.opts.Log("switchover: clients held in PgBouncer for %v", time.Since(held).Round(time.Millisecond))
	if err != nil || answered {
		return err
	}
	return <-done
}

// waitPrimaryRoute waits until HAProxy's primary port has only node name up and a session through
// it can write, or until done reports a failed switchover (answered: done was read).
func (s *Stack) waitPrimaryRoute(ctx context.Context, name string, done <-chan error) (answered bool, err error) {
	deadline := time.Now().Add(time.Minute)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2&target_session_attrs=read-write", s.primary)
	for {
		select {
		case err := <-done:
			if err != nil {
				return true, err
			}
			answered, done = true, nil // a nil channel: this case is not taken again
		default:
		}
		up, err := s.primaryUp()
		if err == nil && len(up) == 1 && up[0] == name {
			if err = s.exec(ctx, url, "SELECT 1"); err == nil {
				return answered, nil
			}
		}
		if err == nil {
			err = fmt.Errorf("primary port up on %v, want only %s", up, name)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return answered, fmt.Errorf("hastack: waiting for the new primary: %w", err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// primaryUp is the nodes HAProxy's primary port routes to now (its stats socket: status UP,
// including "UP 1/2", a node with one failed check that still takes connections).
func (s *Stack) primaryUp() ([]string, error) {
	conn, err := net.DialTimeout("unix", filepath.Join(s.dir, "haproxy.sock"), time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("show stat\n")); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return nil, err
	}
	var up []string
	status := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(strings.TrimPrefix(sc.Text(), "# "), ",")
		if status < 0 {
			for j, h := range f {
				if h == "status" {
					status = j
				}
			}
			continue
		}
		if len(f) > status && f[0] == "primary" && f[1] != "FRONTEND" && f[1] != "BACKEND" && strings.HasPrefix(f[status], "UP") {
			up = append(up, f[1])
		}
	}
	if status < 0 {
		return nil, fmt.Errorf("hastack: HAProxy's show stat: %q", out)
	}
	return up, nil
}

// holdClients makes PgBouncer hold new transactions (PAUSE waits for those running and closes
// its server connections) and returns the function that lets them go (RESUME).
func (s *Stack) holdClients(ctx context.Context) (func(), error) {
	admin := s.bouncer.URL("postgres", "pgbouncer") + "&default_query_exec_mode=simple_protocol"
	if err := s.exec(ctx, admin, "PAUSE"); err != nil {
		return nil, fmt.Errorf("hastack: PgBouncer PAUSE: %w", err)
	}
	return func() {
		if err := s.exec(context.WithoutCancel(ctx), admin, "RESUME"); err != nil {
			s.opts.Log("PgBouncer RESUME: %v", err)
		}
	}, nil
}

// RestartPrimary is a fast restart of the primary's PostgreSQL as an operator does it under
// Patroni: Patroni paused (maintenance mode: no failover, no restart of its own), a CHECKPOINT
// while clients still work, PgBouncer's PAUSE (clients wait), `pg_ctl restart -m fast`, RESUME,
// Patroni resumed. Patroni's own POST /restart started PostgreSQL again only ~3 s after stopping it.
func (s *Stack) RestartPrimary(ctx context.Context) error {
	i, err := s.Leader(ctx)
	if err != nil {
		return err
	}
	n := s.nodes[i]
	if err := s.pause(ctx, true); err != nil {
		return err
	}
	defer func() { _ = s.pause(context.WithoutCancel(ctx), false) }()
	if err := s.exec(ctx, s.nodeURL(n, "postgres"), "CHECKPOINT"); err != nil {
		return err
	}
	resume, err := s.holdClients(ctx)
	if err != nil {
		return err
	}
	defer resume()
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return err
	}
	// The restarted postmaster's own output goes to a file (-l): a pipe it inherited would keep
	// this call waiting for as long as it runs.
	logPath := filepath.Join(n.dir, "restart.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_ctl"), "-D", filepath.Join(n.dir, "data"), "-l", logPath+".server", "-m", "fast", "-w", "restart")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hastack: pg_ctl restart: %w: %s", err, tail(logPath, 5))
	}
	return nil
}

// pause turns Patroni's maintenance mode on or off for the whole cluster, and waits until every
// running node has seen it.
func (s *Stack) pause(ctx context.Context, on bool) error {
	body, _ := json.Marshal(map[string]bool{"pause": on})
	i, err := s.Leader(ctx)
	if err != nil {
		return err
	}
	if err := send(ctx, http.MethodPatch, s.nodes[i].rest("/config"), body); err != nil {
		return err
	}
	return waitFor(ctx, 30*time.Second, func() error {
		for _, n := range s.nodes {
			var st struct {
				Pause bool `json:"pause"`
			}
			if err := getJSON(ctx, n.rest("/patroni"), &st); err != nil {
				return err
			}
			if st.Pause != on {
				return fmt.Errorf("%s: pause %v", n.name, st.Pause)
			}
		}
		return nil
	})
}

// send sends a Patroni REST request and wants 200.
func send(ctx context.Context, method, url string, body []byte) error {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return errors.New("hastack: " + url + ": " + resp.Status + ": " + string(msg))
	}
	return nil
}
