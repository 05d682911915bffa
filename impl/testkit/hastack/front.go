package hastack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Front is the HTTP balancer before triad's servers.
type Front struct {
	URL  string
	proc *proc
}

// StartFront starts HAProxy on port (0: a free one) over the triad servers at backends
// (host:port), round-robin, each checked on GET /readyz as deploy/k8s's readiness probe checks a
// pod: every 2 s, a check taking up to 2.5 s (the probe's own ping waits up to 2 s), three failed
// checks in a row (6 s or more) to take a server out (a database blip of a second or two fails the check on every server at once,
// and taking them all out would turn the blip into the balancer's own 503s until they came back);
// one good check puts it back.
func StartFront(ctx context.Context, dir string, port int, backends []string) (*Front, error) {
	if port == 0 {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		port = ports[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, `global
	maxconn 4096
defaults
	mode http
	timeout connect 2s
	timeout client 60s
	timeout server 60s
	retries 3
	option redispatch
	option forwardfor
frontend triad
	bind 127.0.0.1:%d
	default_backend servers
backend servers
	balance roundrobin
	option httpchk GET /readyz
	http-check expect status 200
	timeout check 2500ms
	default-server inter 2s fall 3 rise 1
`, port)
	for i, be := range backends {
		fmt.Fprintf(&b, "\tserver s%d %s check\n", i, be)
	}
	cfg := filepath.Join(dir, "front.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	s := &Stack{dir: dir}
	p, err := s.spawn(filepath.Join(dir, "front.log"), false, "haproxy", "-db", "-f", cfg)
	if err != nil {
		return nil, err
	}
	f := &Front{URL: fmt.Sprintf("http://127.0.0.1:%d", port), proc: p}
	err = waitFor(ctx, 2*time.Minute, func() error {
		resp, err := http.Get(f.URL + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz %d", resp.StatusCode)
		}
		return nil
	})
	if err != nil {
		f.Stop()
		return nil, fmt.Errorf("hastack: front balancer: %w; log: %s", err, tail(p.logPath, 20))
	}
	return f, nil
}

// Stop stops the balancer.
func (f *Front) Stop() { f.proc.stop(syscall.SIGTERM) }
