package hastack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The faults beyond a crash and the planned procedures (procedures.go): each is what an SRE tries
// on a running stack, as e2e/ha_test.go injects it under load.

// FreezePrimary is a stalled primary (a VM pause, an I/O hang): every PostgreSQL process of the
// leader (its postmaster and all its children) gets SIGSTOP for d, then SIGCONT; the node's
// Patroni runs on. It returns the frozen node's index once the processes run again.
func (s *Stack) FreezePrimary(ctx context.Context, d time.Duration) (int, error) {
	i, err := s.Leader(ctx)
	if err != nil {
		return -1, err
	}
	pm := s.nodes[i].postmaster()
	if pm <= 0 {
		return -1, fmt.Errorf("hastack: %s has no postmaster", s.nodes[i].name)
	}
	// Stopped first, the postmaster forks no child meanwhile; the children are listed after it,
	// until a listing finds none that is not stopped yet.
	stopped := map[int]bool{}
	for {
		more := false
		for _, pid := range append([]int{pm}, children(pm)...) {
			if !stopped[pid] {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				stopped[pid], more = true, true
			}
		}
		if !more {
			break
		}
	}
	s.opts.Log("frozen: %s's %d PostgreSQL processes for %v", s.nodes[i].name, len(stopped), d)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	for pid := range stopped {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	return i, ctx.Err()
}

// children is the pids whose parent is pid (/proc/*/stat).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so the fields after its ')' are read.
		_, rest, ok := strings.Cut(string(b), ") ")
		if f := strings.Fields(rest); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// KillPostmaster is kill -9 of the leader's postmaster alone: its Patroni runs on and sees
// PostgreSQL gone (primary_start_timeout 0: it hands the leader key to a quorum standby rather
// than waiting for crash recovery in place). It returns the node's index.
func (s *Stack) KillPostmaster(ctx context.Context) (int, error) {
	i, err := s.Leader(ctx)
	if err != nil {
		return -1, err
	}
	pm := s.nodes[i].postmaster()
	if pm <= 0 {
		return -1, fmt.Errorf("hastack: %s has no postmaster", s.nodes[i].name)
	}
	return i, syscall.Kill(pm, syscall.SIGKILL)
}

// StopEtcdMajority stops (SIGSTOP) all etcd members but one for d, then lets them go on: etcd has
// no majority, so no key can be written or its lease renewed meanwhile.
func (s *Stack) StopEtcdMajority(ctx context.Context, d time.Duration) error {
	stopped := s.etcd[:len(s.etcd)/2+1]
	for _, e := range stopped {
		_ = e.cmd.Process.Signal(syscall.SIGSTOP)
	}
	s.opts.Log("etcd: %d of %d members stopped for %v", len(stopped), len(s.etcd), d)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	for _, e := range stopped {
		_ = e.cmd.Process.Signal(syscall.SIGCONT)
	}
	return ctx.Err()
}

// StandbyThenLeader crashes a standby (kill -9 of its Patroni and postmaster), lets writes go on
// for between, then crashes the leader: the remaining standby, the other quorum member, must take
// over alone. It returns both nodes' indexes (for RestartNode).
func (s *Stack) StandbyThenLeader(ctx context.Context, between time.Duration) ([]int, error) {
	leader, err := s.Leader(ctx)
	if err != nil {
		return nil, err
	}
	standby := (leader + 1) % len(s.nodes)
	s.crash(standby)
	s.opts.Log("crashed standby %s; writes go on for %v", s.nodes[standby].name, between)
	select {
	case <-time.After(between):
	case <-ctx.Done():
		return []int{standby}, ctx.Err()
	}
	if leader, err = s.Leader(ctx); err != nil {
		return []int{standby}, err
	}
	s.crash(leader)
	return []int{standby, leader}, nil
}

// ForcedFailover is `patronictl failover --candidate <a quorum standby> --force` with the leader
// running, as an operator types it: Patroni demotes the leader (a clean shutdown, which waits for
// the connected standbys to receive all its WAL) and promotes the candidate. It returns the
// candidate's name. Patroni 4 asks no quorum question of a forced failover's candidate
// (docs/operations.md, "Forced failover"): this one is a quorum standby, chosen from /cluster.
func (s *Stack) ForcedFailover(ctx context.Context) (string, error) {
	ms, err := s.members(ctx)
	if err != nil {
		return "", err
	}
	candidate := ""
	for _, m := range ms {
		if m.Role == "quorum_standby" && (m.State == "streaming" || m.State == "running") {
			candidate = m.Name
		}
	}
	if candidate == "" {
		return "", fmt.Errorf("hastack: no streaming quorum standby to fail over to: %+v", ms)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.opts.Patroni, "patronictl"), "-c", s.nodes[0].config,
		"failover", "--candidate", candidate, "--force")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("hastack: patronictl failover: %w: %s", err, out)
	}
	return candidate, nil
}
