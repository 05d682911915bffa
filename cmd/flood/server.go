package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// server is the binary under load.
type server struct {
	cmd      *exec.Cmd
	base     string
	clientID string
	secret   string
	logPath  string
	done     chan struct{}
	waitErr  error
	once     sync.Once
}

func startServer(bin, dir string, dbConns int) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{base: "http://" + addr, clientID: "flood-client", secret: randomHex(16), logPath: filepath.Join(dir, "server.log"), done: make(chan struct{})}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	// Prod mode as an operator runs it: JSON access log at info, the default memory limit, the
	// managed PostgreSQL under the data folder (a separate process, so not in the server's RSS).
	s.cmd = exec.Command(bin, "-mode", "prod", "-addr", addr, "-data-dir", filepath.Join(dir, "data"))
	s.cmd.Env = append(os.Environ(), "ORDERS_CLIENT_ID="+s.clientID, "ORDERS_CLIENT_SECRET="+s.secret,
		"AUTH_SECRET="+randomHex(24), "DATABASE_URL=", "LOG_LEVEL=info", fmt.Sprintf("DB_MAX_CONNS=%d", dbConns))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w (run make build first)", bin, err)
	}
	go func() { s.waitErr = s.cmd.Wait(); logf.Close(); close(s.done) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("the server exited at start: %v; log:\n%s", s.waitErr, tail(s.logPath))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return nil, fmt.Errorf("the server was not ready within 3 minutes; log:\n%s", tail(s.logPath))
		}
	}
}

// stop asks the server to shut down (it stops its PostgreSQL) and waits for it.
func (s *server) stop() error {
	var err error
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
			if s.waitErr != nil {
				err = fmt.Errorf("exited with %v", s.waitErr)
			}
		case <-time.After(60 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = errors.New("did not stop within 60 s of SIGTERM")
		}
	})
	return err
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
