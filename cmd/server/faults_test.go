package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/pgcluster"
)

// Fault tests against the real binary: a database that goes away, a second server on the same
// data folder, clients that hang up. (The postmaster killed under the server is in
// TestServer_ManagedPostgres and impl/pgcluster.)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// serverBinary builds the server once per test process.
func serverBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "triad-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// syncBuffer is a log sink safe to read while the process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type binServer struct {
	base string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// startBinary runs the server binary with args on a free port and waits for /healthz.
func startBinary(t *testing.T, args ...string) *binServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &binServer{base: "http://" + addr, log: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(serverBinary(t), append([]string{"-addr", addr}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(60 * time.Second):
			_ = s.cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(180 * time.Second)
	for {
		if resp, err := http.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("server exited at start: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start within 180s: %s", s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// While its database is down the binary answers 503 database_unavailable with Retry-After on a
// database route, logs the outage a few times rather than once per request, and serves again when
// the database is back, without a restart.
func TestBinary_DatabaseDownAnswers503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgDir := filepath.Join(t.TempDir(), "pg")
	cluster, err := pgcluster.Start(ctx, pgDir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	if err := cluster.EnsureDatabase(ctx, "triad"); err != nil {
		t.Fatal(err)
	}
	s := startBinary(t, "-mode", "dev", "-database-url", cluster.URL("triad"), "-log-level", "info")
	brand := s.base + "/api/brand/000000000000000000000001"
	if code, _, body := get(t, brand); code != http.StatusNotFound {
		t.Fatalf("unknown brand with the database up: %d %s, want 404", code, body)
	}

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	const requests = 150
	for i := range requests {
		code, h, body := get(t, brand)
		var e struct{ Code string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusServiceUnavailable || e.Code != "database_unavailable" || h.Get("Retry-After") == "" {
			t.Fatalf("request %d with the database down: %d Retry-After=%q %s, want 503 database_unavailable with Retry-After",
				i, code, h.Get("Retry-After"), body)
		}
	}
	if code, _, body := get(t, s.base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz with the database down: %d %s", code, body)
	}
	logs := s.log.String()
	lines := strings.Count(logs, "database unavailable: answering 503")
	if lines == 0 || lines > 3 {
		t.Fatalf("%d refused requests logged %d outage lines, want 1-3 (one per 5 s):\n%s", requests, lines, logs)
	}
	if strings.Contains(logs, "internal error") {
		t.Fatalf("the outage was logged as internal errors:\n%s", logs)
	}

	back, err := pgcluster.Start(ctx, pgDir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Stop() })
	waitFor(t, func() bool { code, _, _ := get(t, brand); return code == http.StatusNotFound })
}

// A second server on a data folder whose owner runs refuses with one line naming the owner, and
// the owner keeps serving.
func TestBinary_SecondServerOnSameDataDir(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	first := startBinary(t, "-mode", "dev", "-data-dir", dataDir, "-auth-dev-port", "0")
	waitFor(t, func() bool { code, _, _ := get(t, first.base+"/readyz"); return code == http.StatusOK })

	second := exec.Command(serverBinary(t), "-addr", "127.0.0.1:0", "-mode", "dev", "-data-dir", dataDir)
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	if err == nil {
		t.Fatal("second server on the same data folder started")
	}
	last := lastLine(stderr.String())
	if want := fmt.Sprintf("pid %d", first.cmd.Process.Pid); !strings.Contains(last, want) || !strings.Contains(last, "owner.lock") {
		t.Fatalf("second server's error %q does not name the owner (%s) and its lock file", last, want)
	}
	if code, _, body := get(t, first.base+"/readyz"); code != http.StatusOK {
		t.Fatalf("first server after the refused second: readyz %d %s", code, body)
	}
}

func lastLine(s string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			last = sc.Text()
		}
	}
	return last
}

// Clients that hang up while their login is being worked on are not server errors: no ERROR line.
func TestBinary_ClientGoneIsNoError(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "dev", "-data-dir", t.TempDir(), "-auth-dev-port", "0", "-log-level", "info")
	form := url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}.Encode()
	for range 5 { // fewer than the login throttle's 10, whatever it counts
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/user/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(form), form)
		conn.Close() // gone while the password is being checked
	}
	// A request after them completes, so the hung-up ones have been worked through or dropped.
	time.Sleep(2 * time.Second)
	resp, err := http.Post(s.base+"/api/user/login", "application/x-www-form-urlencoded", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login after the hang-ups: %d", resp.StatusCode)
	}
	if logs := s.log.String(); strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "superfluous") {
		t.Fatalf("clients that hung up were logged as server errors:\n%s", logs)
	}
}
