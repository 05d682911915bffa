package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/http"
	netmail "net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
	"github.com/triadhq/triad/impl/testkit/serverbin"
)

// The process tests, all in this file, against the one build of the binary (serverbin): what only
// a process shows. A database that goes away, its postmaster killed under the server (kill -9), a
// second server on the same data folder, clients that hang up, a full disk, and the memory an idle
// server gives back. The route tests serve the same handler in process (routerServer); the login
// scenarios (logins_binary_test.go, devices_binary_test.go, confirmlimit_test.go) and the access
// log's lines (accesslog_test.go) run against this binary too, for its speed: it is built without
// -race, where a production argon2id hash costs most of a second.

// serverBinary is the server binary, built once per run (serverbin: make test's cmd/testrun
// builds it for every package) or else once per test process.
func serverBinary(t *testing.T) string {
	t.Helper()
	return serverbin.Path(t, false)
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

// startBinary runs the server binary with args on a port it picks itself and waits for /healthz.
func startBinary(t *testing.T, args ...string) *binServer {
	t.Helper()
	return startBinaryEnv(t, nil, args...)
}

// listeningLine finds the address in the binary's "listening" line, text (dev) or JSON (prod). The
// metrics port's line ("metrics listening") is not it.
var listeningLine = regexp.MustCompile(`(?m)(?:\bmsg=listening addr=|"msg":"listening","addr":")([0-9.]+:[0-9]+)`)

// startBinaryEnv is startBinary with env (VAR=value) added to the test's environment. The binary
// listens on 127.0.0.1:0 and the test reads the port from its log: a port picked by the test and
// closed before the start could be taken by another process meanwhile (at a load of 20 another
// process did, and answered the test's requests).
func startBinaryEnv(t *testing.T, env []string, args ...string) *binServer {
	t.Helper()
	s := &binServer{log: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(serverBinary(t), append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
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
	bound := patience.Bound(180 * time.Second)
	deadline := time.Now().Add(bound)
	for {
		if s.base == "" {
			if m := listeningLine.FindStringSubmatch(s.log.String()); m != nil {
				s.base = "http://" + m[1]
			}
		}
		if s.base != "" {
			if resp, err := http.Get(s.base + "/healthz"); err == nil {
				resp.Body.Close()
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("server exited at start: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start within %v: %s", bound, s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// While its database is down the binary answers 503 database_unavailable with Retry-After on a
// database route, logs the outage a few times rather than once per request, and serves again when
// the database is back, without a restart.
func TestBinary_DatabaseDownAnswers503(t *testing.T) {
	t.Parallel()
	cluster, pgDir := outsideCluster(t)
	s := startBinary(t, "-mode", "dev", "-database-url", cluster.URL("triad"), "-log-level", "info")
	brand := s.base + "/api/brand/000000000000000000000001"
	if code, _, body := get(t, brand); code != http.StatusNotFound {
		t.Fatalf("unknown brand with the database up: %d %s, want 404", code, body)
	}

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	const requests = 150
	outage := time.Now()
	for i := range requests {
		code, h, body := get(t, brand)
		var e struct{ Code string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusServiceUnavailable || e.Code != "database_unavailable" || h.Get("Retry-After") == "" {
			t.Fatalf("request %d with the database down: %d Retry-After=%q %s, want 503 database_unavailable with Retry-After",
				i, code, h.Get("Retry-After"), body)
		}
	}
	// The readiness probe fails too, and joins the same rate-limited line rather than one each.
	for range 20 {
		if code, _, body := get(t, s.base+"/readyz"); code != http.StatusServiceUnavailable {
			t.Fatalf("readyz with the database down: %d %s", code, body)
		}
	}
	// One line per 5 s at most: on a loaded machine the requests take longer than the 10 s that
	// allow three.
	most := max(3, 1+int(time.Since(outage)/(5*time.Second)))
	logs := s.log.String()
	lines := strings.Count(logs, "database unavailable: answering 503")
	if lines == 0 || lines > most {
		t.Fatalf("%d refused requests and 20 probes in %v logged %d outage lines, want 1-%d (one per 5 s):\n%s",
			requests, time.Since(outage).Round(time.Second), lines, most, logs)
	}
	if regexp.MustCompile(`level=WARN msg="(readiness|database unavailable)`).MatchString(logs) {
		t.Fatalf("the outage was logged per request or probe at warn:\n%s", logs)
	}
	if strings.Contains(logs, "internal error") {
		t.Fatalf("the outage was logged as internal errors:\n%s", logs)
	}

	back, err := pgcluster.Start(context.Background(), pgDir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Stop() })
	waitFor(t, func() bool { code, _, _ := get(t, brand); return code == http.StatusNotFound })
}

// logins posts one password login to the orders token endpoint and to brands login and returns
// each answer's status and Retry-After.
func (s *binServer) logins(t *testing.T, ordersPw, brandsPw string) (orders, brands loginAnswer) {
	t.Helper()
	post := func(path string, form url.Values) loginAnswer {
		resp, err := http.PostForm(s.base+path, form)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return loginAnswer{resp.StatusCode, resp.Header.Get("Retry-After")}
	}
	orders = post("/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID},
		"client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {ordersPw}})
	brands = post("/api/user/login", url.Values{"email": {"demo@brands.test"}, "password": {brandsPw}})
	return orders, brands
}

type loginAnswer struct {
	status     int
	retryAfter string
}

// Logins that fail because the database is down are not guesses: more than the throttle's ten,
// right and wrong passwords, on the orders token endpoint and brands login, all answer 503; once
// the database is back the right password logs in on both (not 429).
func TestBinary_OutageLocksNoOneOut(t *testing.T) {
	t.Parallel()
	cluster, pgDir := outsideCluster(t)
	s := startBinary(t, "-mode", "dev", "-database-url", cluster.URL("triad"), "-auth-dev-port", "0")
	if o, b := s.logins(t, "alice-password", "demo-password"); o.status != http.StatusOK || b.status != http.StatusOK {
		t.Fatalf("logins with the database up: orders %d, brands %d; want 200", o.status, b.status)
	}

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		pw := map[bool]string{true: "-password", false: "-wrong"}[i%2 == 0]
		o, b := s.logins(t, "alice"+pw, "demo"+pw)
		for name, a := range map[string]loginAnswer{"orders": o, "brands": b} {
			if a.status != http.StatusServiceUnavailable || a.retryAfter == "" {
				t.Fatalf("%s login %d with the database down: %d Retry-After=%q, want 503 with Retry-After", name, i+1, a.status, a.retryAfter)
			}
		}
	}

	back, err := pgcluster.Start(context.Background(), pgDir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Stop() })
	waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })
	if o, b := s.logins(t, "alice-password", "demo-password"); o.status != http.StatusOK || b.status != http.StatusOK {
		t.Fatalf("right passwords after the outage: orders %d (Retry-After %q), brands %d (Retry-After %q); want 200",
			o.status, o.retryAfter, b.status, b.retryAfter)
	}
}

// kill -9 of the managed postmaster under the running binary: while it is down /readyz is 503 and
// a route that needs the database answers 503 database_unavailable with Retry-After (never 500);
// after the supervisor's restart both answer 200 again from the same server process.
func TestBinary_PostmasterKilled(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	s := startBinary(t, "-mode", "dev", "-data-dir", dataDir, "-auth-dev-port", "0")
	brand := s.base + "/api/brand/655e1f2a0000000000000001"
	waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })
	if code, _, body := get(t, brand); code != http.StatusOK {
		t.Fatalf("brand with the database up: %d %s", code, body)
	}

	pidFile, err := os.ReadFile(filepath.Join(dataDir, "pg", "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Poll both until each has been seen down and then both are up again.
	var readyDown, apiDown bool
	deadline := time.Now().Add(patience.Bound(90 * time.Second))
	for {
		readyCode, _, _ := get(t, s.base+"/readyz")
		code, h, body := get(t, brand)
		switch code {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			var e struct{ Code string }
			_ = json.Unmarshal([]byte(body), &e)
			if e.Code != "database_unavailable" || h.Get("Retry-After") == "" {
				t.Fatalf("brand with the postmaster dead: 503 Retry-After=%q %s, want database_unavailable with Retry-After", h.Get("Retry-After"), body)
			}
			apiDown = true
		default:
			t.Fatalf("brand with the postmaster dead: %d %s, want 503 database_unavailable", code, body)
		}
		readyDown = readyDown || readyCode == http.StatusServiceUnavailable
		if readyDown && apiDown && readyCode == http.StatusOK && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after kill -9: readyz seen 503 %v, brand seen 503 %v, now readyz %d brand %d; want both down, then both 200",
				readyDown, apiDown, readyCode, code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The supervisor logs the restart once the new postmaster is ready, which the server may see first.
	waitFor(t, func() bool { return strings.Contains(s.log.String(), "postgres restarted") })
	select {
	case <-s.done:
		t.Fatalf("the server exited:\n%s", s.log.String())
	default:
	}
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

// Clients that hang up while their login is being worked on, or while a large answer is being
// sent, are not server errors: no ERROR line, no "superfluous WriteHeader"; and the hung-up logins
// count nothing, so the right password still logs in after more of them than the throttle's ten.
func TestBinary_ClientGoneIsNoError(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "dev", "-data-dir", t.TempDir(), "-auth-dev-port", "0", "-log-level", "debug")
	addr := strings.TrimPrefix(s.base, "http://")
	form := url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}.Encode()
	for range 15 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /api/user/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(form), form)
		conn.Close() // gone while the password is being checked
	}

	// Gone mid-response: a client with a small receive buffer reads the first bytes of a large
	// answer and hangs up while the server is still writing it.
	small := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	for _, path := range []string{"/openapi/orders.yaml", "/docs/swagger-ui-bundle.js", "/api/brand/list"} {
		conn, err := small.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		buf := make([]byte, 64)
		if _, err := io.ReadFull(conn, buf); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if !strings.HasPrefix(string(buf), "HTTP/1.1 200") {
			t.Fatalf("GET %s: %q, want a 200", path, buf)
		}
		conn.Close()
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
		t.Fatalf("login after 15 hang-ups: %d (Retry-After %q), want 200", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if logs := s.log.String(); strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "superfluous") {
		t.Fatalf("clients that hung up were logged as server errors:\n%s", logs)
	}
}

// outsideCluster starts a PostgreSQL cluster (in the folder it returns) with a triad database that the test, not the binary,
// stops and starts: the binary's own managed cluster would restart too fast to hold an outage open.
func outsideCluster(t *testing.T) (*pgcluster.Cluster, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	cluster, err := pgcluster.Start(ctx, dir, pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	if err := cluster.EnsureDatabase(ctx, "triad"); err != nil {
		t.Fatal(err)
	}
	return cluster, dir
}

// diskFullSQL makes every insert into the tables a write route of each surface writes fail the way
// PostgreSQL fails on a full disk: a real error from the server with SQLSTATE 53100 (disk_full)
// and its message, raised by a trigger. (Filling a real disk needs a small filesystem to mount,
// which takes root; the server, the driver and the error path see the same thing either way.)
const diskFullSQL = `
CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'could not extend file "base/16384/16385": No space left on device'
		USING ERRCODE = '53100', HINT = 'Check free disk space.';
END $$;
CREATE TRIGGER disk_full BEFORE INSERT ON orders FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
CREATE TRIGGER disk_full BEFORE INSERT ON brand_users FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
CREATE TRIGGER disk_full BEFORE INSERT ON auth_used_ids FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full();
`

// A full disk (SQLSTATE class 53) on every surface: orders, brands and auth writes answer 503
// database_unavailable with Retry-After (never 500 internal_error), the log holds the outage's
// rate-limited line (not an ERROR line per request), and /readyz says not ready although the
// database still answers its ping.
func TestBinary_DiskFullAnswers503AndNotReady(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t, smtptest.Options{})
	dbURL := dbtest.NewURL(t)
	s := startBinary(t, "-mode", "dev", "-database-url", dbURL, "-auth-dev-port", "0", "-log-level", "info",
		"-auth-smtp-host", mail.Host, "-auth-smtp-port", strconv.Itoa(mail.Port), "-auth-smtp-starttls=false",
		"-auth-smtp-from", "triad <noreply@example.com>")
	waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })

	// Before the disk fills: an orders token, and a confirmation e-mail whose token is used later.
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	resp, err := http.PostForm(s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID},
		"client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("orders login: %d", resp.StatusCode)
	}
	if code, _, body := get(t, s.base+"/auth/email/login?user=alice&address=alice@example.com"); code != http.StatusOK {
		t.Fatalf("confirmation e-mail: %d %s", code, body)
	}
	confirmation := confirmationToken(t, mail)

	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), diskFullSQL); err != nil {
		t.Fatal(err)
	}

	do := func(name, method, path, ctype, body, bearer string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var e struct{ Code string }
		_ = json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusServiceUnavailable || e.Code != "database_unavailable" || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s on a full disk: %d Retry-After=%q %s, want 503 database_unavailable with Retry-After",
				name, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	const requests = 60
	for i := range requests {
		do("orders: create", "POST", "/orders", "application/json", `{"description":"paint the fence","price":"10.00"}`, tok.AccessToken)
		if i < 3 { // each hashes a password first
			do("brands: register", "POST", "/api/user/register", "application/x-www-form-urlencoded",
				url.Values{"name": {"Kate"}, "email": {"kate" + strconv.Itoa(i) + "@example.com"}, "password": {"kate-password-1"}}.Encode(), "")
		}
	}
	do("auth: confirm", "GET", "/auth/email/login?token="+confirmation, "", "", "")

	code, _, body := get(t, s.base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"unavailable"`) {
		t.Fatalf("readyz on a full disk: %d %s, want 503 unavailable", code, body)
	}
	logs := s.log.String()
	if n := strings.Count(logs, "database unavailable: answering 503"); n == 0 || n > 3 {
		t.Fatalf("%d refusals logged %d outage lines, want 1-3 (one per 5 s):\n%s", requests+4, n, logs)
	}
	if !strings.Contains(logs, "53100") {
		t.Fatalf("the outage line does not name the SQLSTATE:\n%s", logs)
	}
	if strings.Contains(logs, "internal error") {
		t.Fatalf("the full disk was logged as internal errors:\n%s", logs)
	}

	// Space freed: writes succeed again at once.
	if _, err := conn.Exec(context.Background(), `DROP FUNCTION test_disk_full() CASCADE`); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.base+"/orders", strings.NewReader(`{"description":"paint the fence","price":"10.00"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create after the disk was freed: %d, want 201", resp.StatusCode)
	}
}

// confirmationToken reads the token out of the last confirmation e-mail the server sent.
func confirmationToken(t *testing.T, mail *smtptest.Server) string {
	t.Helper()
	msgs := mail.Messages()
	if len(msgs) == 0 {
		t.Fatal("no confirmation e-mail")
	}
	msg, err := netmail.ReadMessage(strings.NewReader(msgs[len(msgs)-1].Data))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre>([A-Za-z0-9_\-.]+)</pre>`).FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no token in the message:\n%s", body)
	}
	return m[1]
}

// TestBinary_IdleProdServerReturnsStartUpMemory: a prod server that has served nothing gives the
// garbage of its start-up back to the kernel. Before, it kept 50+ MiB of anonymous memory (a heap
// goal set mid start-up, five times over under GOGC 400) until traffic came; now its anonymous
// memory falls to about 10 MiB as soon as it listens. Anonymous memory, not VmRSS: the binary's
// mapped pages depend on the filesystem it runs from; `make bench` prints the whole RSS.
func TestBinary_IdleProdServerReturnsStartUpMemory(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef")
	const bound = 24 << 10 // KiB
	var anon int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		anon = statusKiB(t, s.cmd.Process.Pid, "RssAnon")
		if anon <= bound {
			return
		}
	}
	t.Fatalf("idle prod server holds %d KiB of anonymous memory, want at most %d", anon, bound)
}

// statusKiB reads a field of /proc/<pid>/status in KiB.
func statusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
