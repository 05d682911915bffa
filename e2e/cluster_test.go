package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// cluster is the production topology in miniature: several servers over one PostgreSQL database,
// behind a real load balancer (HAProxy, round-robin, health-checked on /readyz).
type cluster struct {
	lb    *server   // the balancer: what clients talk to
	nodes []*server // the replicas, each reachable directly too
	dbURL string
}

// startCluster starts n replicas at the same instant on one fresh database, and HAProxy in front.
// Every replica is configured with the balancer's URL as its public URL (AUTH_URL), as it would be
// in production.
func startCluster(t *testing.T, n int, extraArgs ...string) *cluster {
	t.Helper()
	return startClusterBehind(t, n, nil, extraArgs...)
}

// startClusterBehind is startCluster with lines added to HAProxy's backend section (e.g.
// "http-reuse always").
func startClusterBehind(t *testing.T, n int, backend []string, extraArgs ...string) *cluster {
	t.Helper()
	lbPort := freePort(t)
	lbURL := fmt.Sprintf("http://127.0.0.1:%d", lbPort)
	c := &cluster{dbURL: dbtest.NewURL(t), nodes: make([]*server, n)}
	devPort := freePort(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.nodes[i] = launchRetrying(t, launchOpts{dbURL: c.dbURL, publicURL: lbURL, devPort: devPort, args: extraArgs})
		}()
	}
	wg.Wait()
	for _, node := range c.nodes {
		if node == nil { // launchRetrying failed the test from its goroutine
			t.FailNow()
		}
		waitReady(t, node.URL+"/readyz")
	}
	startHAProxy(t, lbPort, c.nodes, backend...)
	c.lb = &server{URL: lbURL, base: map[string]string{}, log: &syncBuffer{}, dbURL: c.dbURL}
	waitReady(t, lbURL+"/readyz")
	return c
}

// haproxyBin finds HAProxy (scripts/ensure-haproxy.sh installs it; Debian puts it in /usr/sbin).
func haproxyBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	t.Fatal("haproxy is missing: run scripts/ensure-haproxy.sh (make test does)")
	return ""
}

// startHAProxy balances port over the nodes round-robin. A node leaves the rotation when /readyz
// fails (checked every 300 ms) and a request whose connection is refused is sent to another node.
// A check waits for /readyz's answer a second, stretched with the machine's load (timeout check):
// at load 33, with only the 300 ms interval as its timeout, every node was taken out at once.
// backend lines go into the backend section.
func startHAProxy(t *testing.T, port int, nodes []*server, backend ...string) {
	t.Helper()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, `global
	maxconn 4096
defaults
	mode http
	timeout connect 2s
	timeout client 60s
	timeout server 60s
	retries 3
	option redispatch
frontend triad
	bind 127.0.0.1:%d
	default_backend replicas
backend replicas
	balance roundrobin
	option httpchk GET /readyz
	http-check expect status 200
	timeout check %dms
	default-server inter 300ms fall 1 rise 1
`, port, patience.Bound(time.Second).Milliseconds())
	for _, line := range backend {
		fmt.Fprintf(&cfg, "\t%s\n", line)
	}
	for i, n := range nodes {
		fmt.Fprintf(&cfg, "\tserver r%d %s check\n", i+1, strings.TrimPrefix(n.URL, "http://"))
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, haproxyBin(t), "-db", "-f", path)
	cmd.WaitDelay = 5 * time.Second
	log := &syncBuffer{}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting haproxy: %v", err)
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			log.WriteLine(sc.Text())
		}
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("haproxy log:\n%s", log.String())
		}
	})
}
