package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// logRecorder collects a cluster's Log and Warn lines.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) logf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(f, a...))
}

func (l *logRecorder) has(s string) bool { return l.count(s) > 0 }

// count is how many recorded lines contain s.
func (l *logRecorder) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// postmasterPID reads the running postmaster's pid from its pid file.
func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func canQuery(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx) == nil
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 60s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A second process (here: a second Start) on a folder whose owner lives is refused with an error
// naming the owner, and the first cluster keeps running.
func TestCluster_SecondOwnerRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	c, err := Start(ctx, dir, Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })

	_, err = Start(ctx, dir, Options{Ephemeral: true})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Start = %v, want ErrInUse", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line naming the owner's pid %d", msg, os.Getpid())
	}
	if !canQuery(c.URL("postgres")) {
		t.Fatal("the first cluster stopped answering after a refused second start")
	}
	// Once the owner stops, the folder is free again.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	c2, err := Start(ctx, dir, Options{Ephemeral: true})
	if err != nil {
		t.Fatalf("Start after the owner stopped: %v", err)
	}
	_ = c2.Stop()
}

// A postmaster left running by an owner that died (no lock held) is taken over, not refused.
func TestCluster_TakesOverFromDeadOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	c, err := Start(ctx, dir, Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	// The orphan: a postmaster nobody holds the lock for, as after kill -9 of its server.
	if err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-l", filepath.Join(dir, "orphan.log"), "-w", "start"); err != nil {
		t.Fatal(err)
	}
	orphan := postmasterPID(t, dir)
	var log logRecorder
	c2, err := Start(ctx, dir, Options{Ephemeral: true, Log: log.logf})
	if err != nil {
		t.Fatalf("Start over a dead owner's cluster: %v", err)
	}
	t.Cleanup(func() { _ = c2.Stop() })
	if !log.has("left running by a server that is gone") || postmasterPID(t, dir) == orphan {
		t.Fatalf("orphan %d not taken over; log %q", orphan, log.lines)
	}
	if !canQuery(c2.URL("postgres")) {
		t.Fatal("taken-over cluster does not answer")
	}
}

// kill -9 of the postmaster: the owner notices, logs it, restarts it, and it serves again.
func TestCluster_RestartsKilledPostmaster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	var log logRecorder
	c, err := Start(ctx, dir, Options{Log: log.logf}) // durable: an ephemeral cluster may lose its last commits in a crash
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	execSQL(t, c.URL("postgres"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')")

	for round := range 2 { // twice: the restarted postmaster is supervised too
		pid := postmasterPID(t, dir)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Served by a new postmaster, and that one seen started by the supervisor: it logs the
		// restart only after its own readiness poll, which may come a moment after ours, and a kill
		// before it would make the next round test a start instead of a supervised postmaster.
		eventually(t, fmt.Sprintf("round %d: a new postmaster serving, its restart logged", round), func() bool {
			return canQuery(c.URL("postgres")) && postmasterPID(t, dir) != pid && log.count("postgres restarted") == round+1
		})
	}
	if log.count("died") != 2 {
		t.Fatalf("deaths not logged: %q", log.lines)
	}
	var v string
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "still here" {
		t.Fatalf("after restarts: %q %v", v, err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatal("postmaster still running after Stop")
	}
}

// A stop that arrives while the supervisor is bringing a killed postmaster back (crash recovery,
// or serving but not yet seen to serve) still ends with a cleanly stopped cluster: no postmaster
// left running and no stale postmaster.pid for the next owner.
func TestCluster_StopDuringRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	c, err := Start(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	pid := postmasterPID(t, dir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The replacement has written its pid file: it is starting, and the supervisor is waiting
	// for it to accept connections.
	var next int
	eventually(t, "a replacement postmaster starting", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
		if err != nil {
			return false
		}
		next, _ = strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		return next != 0 && next != pid
	})
	_ = c.Stop()
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid left behind after Stop (stat: %v)", err)
	}
	if err := syscall.Kill(next, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("postmaster %d still running after Stop (%v)", next, err)
	}
}
