// Command flood is the login-flood load run: it starts the server binary in prod mode with its own
// managed PostgreSQL, drives an unauthenticated login and registration flood at the orders and
// brands surfaces, and meanwhile has one real user log in every half second from another address.
// It reports the server's peak resident memory and the real user's login latencies, and exits
// with status 1 when the peak exceeds -max-rss or the real user's median login exceeds
// -max-median (a login that was refused counts as slower than any that succeeded).
//
// It is a load run, not a test: make flood runs it (docs/operations.md); make test does not.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(2)
	}
}

type config struct {
	server    string
	conns     int
	sources   int
	duration  time.Duration
	every     time.Duration
	maxRSS    int64
	maxMedian time.Duration
	keep      bool
}

func run() error {
	var c config
	var maxRSSMiB int64
	flag.StringVar(&c.server, "server", "bin/server", "the server binary to start")
	flag.IntVar(&c.conns, "conns", 120, "flood connections (half logins, half registrations, split over orders and brands)")
	flag.IntVar(&c.sources, "sources", 120, "loopback addresses the flood connects from (127.0.1.1 onward): 1 is one attacker, which the per-address login cap stops early; many spread the flood as a botnet would")
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "how long the flood lasts")
	flag.DurationVar(&c.every, "every", 500*time.Millisecond, "the real user's login interval")
	flag.Int64Var(&maxRSSMiB, "max-rss", 256, "fail when the server's peak RSS exceeds this many MiB")
	flag.DurationVar(&c.maxMedian, "max-median", time.Second, "fail when the real user's median login time exceeds this")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary data folder and server log")
	flag.Parse()
	c.maxRSS = maxRSSMiB << 20
	if c.conns < 4 || c.sources < 1 || c.sources > 250*250 {
		return errors.New("want -conns >= 4 and 1 <= -sources <= 62500")
	}

	dir, err := os.MkdirTemp("", "triad-flood-")
	if err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	srv, err := startServer(c.server, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("server pid %d on %s (prod mode, managed PostgreSQL in %s)\n", srv.cmd.Process.Pid, srv.base, dir)

	real := newUser(srv, "127.0.0.2")
	if err := real.register(); err != nil {
		return fmt.Errorf("registering the real user: %w", err)
	}
	baseRSS := rss(srv.cmd.Process.Pid, "VmRSS")

	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	peak := &peakSampler{pid: srv.cmd.Process.Pid}
	wg.Go(func() { peak.run(ctx) })
	stats := &floodStats{}
	for i := range c.conns {
		src := sourceAddr(i % c.sources)
		wg.Go(func() { flood(ctx, srv, src, i, stats) })
	}
	var logins []login
	wg.Go(func() { logins = real.loginEvery(ctx, c.every) })
	wg.Wait()
	hwm := rss(srv.cmd.Process.Pid, "VmHWM")

	fmt.Printf("flood: %d connections from %d addresses for %s: %s\n", c.conns, c.sources, c.duration, stats)
	fmt.Printf("server RSS: %.0f MiB before the flood, peak %.0f MiB sampled, VmHWM %.0f MiB (limit %d MiB)\n",
		mib(baseRSS), mib(peak.max.Load()), mib(hwm), maxRSSMiB)
	median, ok, summary := summarize(logins)
	fmt.Printf("real user: %s\n", summary)

	var failures []string
	if top := max(hwm, peak.max.Load()); top > c.maxRSS {
		failures = append(failures, fmt.Sprintf("peak RSS %.0f MiB > %d MiB", mib(top), maxRSSMiB))
	}
	if !ok || median > c.maxMedian {
		failures = append(failures, fmt.Sprintf("real user's median login %s > %s", fmtMedian(median, ok), c.maxMedian))
	}
	if err := srv.stop(); err != nil {
		failures = append(failures, "server: "+err.Error())
	}
	if len(failures) > 0 {
		fmt.Println("FAIL:", strings.Join(failures, "; "))
		if c.keep {
			fmt.Println("server log:", srv.logPath)
		}
		os.Exit(1)
	}
	fmt.Println("PASS")
	return nil
}

// sourceAddr is the i-th flood address, 127.0.1.1 onward (Linux answers for all of 127.0.0.0/8).
func sourceAddr(i int) string { return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

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

func startServer(bin, dir string) (*server, error) {
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
		"AUTH_SECRET="+randomHex(24), "DATABASE_URL=", "LOG_LEVEL=info")
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

// clientFrom is an HTTP client whose connections come from the local address src, one connection
// at a time (a flood connection, or the real user's browser).
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext,
		MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
}

// floodStats counts the flood's answers by class.
type floodStats struct {
	sent, ok, refused, throttled, busy, other, errs atomic.Int64
}

func (f *floodStats) String() string {
	return fmt.Sprintf("%d requests: %d 2xx, %d 4xx wrong password or taken, %d 429 throttled, %d 503 busy, %d other, %d transport errors",
		f.sent.Load(), f.ok.Load(), f.refused.Load(), f.throttled.Load(), f.busy.Load(), f.other.Load(), f.errs.Load())
}

func (f *floodStats) count(status int, err error) {
	f.sent.Add(1)
	switch {
	case err != nil:
		f.errs.Add(1)
	case status < 300:
		f.ok.Add(1)
	case status == http.StatusTooManyRequests:
		f.throttled.Add(1)
	case status == http.StatusServiceUnavailable:
		f.busy.Add(1)
	case status >= 400 && status < 500:
		f.refused.Add(1)
	default:
		f.other.Add(1)
	}
}

// flood sends one kind of unauthenticated request over one connection until ctx ends: kind i%4
// is an orders login, a brands login, an orders registration or a brands registration, each with
// a fresh name, so no per-account limit applies.
func flood(ctx context.Context, s *server, src string, i int, stats *floodStats) {
	c := clientFrom(src)
	defer c.CloseIdleConnections()
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("f%d-%d-%s", i, n, randomHex(3))
		var req *http.Request
		switch i % 4 {
		case 0:
			req = form(ctx, s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {s.clientID},
				"client_secret": {s.secret}, "username": {name}, "password": {"not-the-password"}})
		case 1:
			req = form(ctx, s.base+"/api/user/login", url.Values{"email": {name + "@flood.test"}, "password": {"not-the-password"}})
		case 2:
			req = jsonReq(ctx, s.base+"/users", map[string]string{"username": name, "password": "flood-password", "userType": "Customer"})
		default:
			req = form(ctx, s.base+"/api/user/register", url.Values{"name": {name}, "email": {name + "@flood.test"}, "password": {"flood-password"}})
		}
		resp, err := c.Do(req)
		if ctx.Err() != nil {
			return // the flood is over; this answer is not counted
		}
		status := 0
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		stats.count(status, err)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a refused connection: do not spin
		}
	}
}

func form(ctx context.Context, u string, v url.Values) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func jsonReq(ctx context.Context, u string, v any) *http.Request {
	b, _ := json.Marshal(v)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// user is the real user: an account on orders and on brands, logging in from its own address.
type user struct {
	s               *server
	c               *http.Client
	name, email, pw string
}

func newUser(s *server, src string) *user {
	return &user{s: s, c: clientFrom(src), name: "real-user", email: "real-user@flood.test", pw: "real-user-password-" + randomHex(4)}
}

func (u *user) register() error {
	for _, req := range []*http.Request{
		jsonReq(context.Background(), u.s.base+"/users", map[string]string{"username": u.name, "password": u.pw, "userType": "Customer"}),
		form(context.Background(), u.s.base+"/api/user/register", url.Values{"name": {"Real User"}, "email": {u.email}, "password": {u.pw}}),
	} {
		resp, err := u.c.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("%s: %d %s", req.URL.Path, resp.StatusCode, b)
		}
	}
	return nil
}

// login is one of the real user's logins.
type login struct {
	surface string
	took    time.Duration
	status  int // 0: a transport error
}

// loginEvery logs in every interval, alternating orders and brands, until ctx ends; each login
// runs on its own context so the last one is not cut short.
func (u *user) loginEvery(ctx context.Context, every time.Duration) []login {
	var out []login
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		var req *http.Request
		surface := "orders"
		if n%2 == 0 {
			req = form(context.Background(), u.s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {u.s.clientID},
				"client_secret": {u.s.secret}, "username": {u.name}, "password": {u.pw}})
		} else {
			surface = "brands"
			req = form(context.Background(), u.s.base+"/api/user/login", url.Values{"email": {u.email}, "password": {u.pw}})
		}
		start := time.Now()
		resp, err := u.c.Do(req)
		l := login{surface: surface}
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			l.status = resp.StatusCode
		}
		l.took = time.Since(start)
		out = append(out, l)
	}
}

// summarize gives the median login time, where a login that was not answered 200 counts as
// slower than every one that was (the user did not get in), and ok=false when that makes the
// median one of them.
func summarize(logins []login) (median time.Duration, ok bool, text string) {
	if len(logins) == 0 {
		return 0, false, "no logins"
	}
	sorted := slices.Clone(logins)
	slices.SortFunc(sorted, func(a, b login) int {
		af, bf := a.status != http.StatusOK, b.status != http.StatusOK
		if af != bf {
			if af {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.took, b.took)
	})
	mid := sorted[(len(sorted)-1)/2]
	median, ok = mid.took, mid.status == http.StatusOK
	var okTimes []time.Duration
	statuses := map[int]int{}
	per := map[string][]time.Duration{}
	for _, l := range logins {
		statuses[l.status]++
		if l.status == http.StatusOK {
			okTimes = append(okTimes, l.took)
			per[l.surface] = append(per[l.surface], l.took)
		}
	}
	slices.Sort(okTimes)
	var b strings.Builder
	fmt.Fprintf(&b, "%d logins, median %s", len(logins), fmtMedian(median, ok))
	if len(okTimes) > 0 {
		fmt.Fprintf(&b, ", successful ones %s..%s", okTimes[0].Round(time.Millisecond), okTimes[len(okTimes)-1].Round(time.Millisecond))
	}
	for _, s := range []string{"orders", "brands"} {
		if t := per[s]; len(t) > 0 {
			slices.Sort(t)
			fmt.Fprintf(&b, "; %s median %s", s, t[(len(t)-1)/2].Round(time.Millisecond))
		}
	}
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	b.WriteString("; statuses")
	for _, c := range codes {
		fmt.Fprintf(&b, " %d×%d", c, statuses[c])
	}
	return median, ok, b.String()
}

func fmtMedian(d time.Duration, ok bool) string {
	if !ok {
		return "not logged in (most logins refused)"
	}
	return d.Round(time.Millisecond).String()
}

// peakSampler records the highest VmRSS of pid, sampled every 50 ms (VmHWM, read at the end,
// catches peaks between samples).
type peakSampler struct {
	pid int
	max atomic.Int64
}

func (p *peakSampler) run(ctx context.Context) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if v := rss(p.pid, "VmRSS"); v > p.max.Load() {
			p.max.Store(v)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rss reads a field of /proc/<pid>/status in bytes (0 when it cannot).
func rss(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, found := strings.Cut(sc.Text(), ":")
		if !found || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
