package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

// makeFlags are the arguments of a make run from a test: the npm packages are never reinstalled
// (npm ci would empty node_modules under the tests running beside this one; ensureNodeModules has
// installed them when they were missing).
func makeFlags(args ...string) []string {
	return append([]string{"--no-print-directory", "-o", "node_modules/.installed"}, args...)
}

// startMock runs `make mock` for one spec on a free port, as a frontend team does before the
// backend exists, stops it when t ends, and returns its base URL. The port is picked just before
// Prism listens on it, seconds later on a busy machine, so another process may take it meanwhile:
// then it tries again on another (as launchRetrying does for the server).
func startMock(t *testing.T, surface string) string {
	t.Helper()
	ensureNodeModules(t)
	for attempt := 0; ; attempt++ {
		base, log := startMockOn(t, surface, freePort(t))
		if base != "" {
			return base
		}
		if attempt == 2 || !strings.Contains(log, "EADDRINUSE") {
			t.Fatalf("make mock ended before listening:\n%s", log)
		}
	}
}

// startMockOn is startMock on port: "" and make's output when it ends before listening.
func startMockOn(t *testing.T, surface string, port int) (base, log string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "make", makeFlags("mock", "MOCK_SPECS="+surface, fmt.Sprintf("MOCK_%s_PORT=%d", strings.ToUpper(surface), port))...)
	cmd.Dir = repoRoot
	// Its own process group, so the stop reaches make, the script and Prism.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	out := &syncBuffer{}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		seen := false
		for sc.Scan() {
			out.WriteLine(sc.Text())
			if !seen && strings.Contains(sc.Text(), "Prism is listening on") {
				seen = true
				close(up)
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("make mock:\n%s", out.String())
		}
	})
	select {
	case <-up:
	case <-exited:
		return "", out.String()
	case <-time.After(patience.Bound(2 * time.Minute)):
		t.Fatalf("make mock did not listen within %v:\n%s", patience.Bound(2*time.Minute), out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("mock %s: http://127.0.0.1:%d", surface, port)) {
		t.Fatalf("make mock did not say where %s is served:\n%s", surface, out.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), ""
}

// TestMake_MockServesTheSpecExamples runs `make mock` for the orders spec and checks that it
// answers with the spec's examples and takes a price as a decimal string.
func TestMake_MockServesTheSpecExamples(t *testing.T) {
	t.Parallel()
	base := startMock(t, orders)

	spec := loadSpec(t, orders)
	example := func(path, method string, status int) any {
		t.Helper()
		op := spec.Paths.Find(path).GetOperation(method)
		raw, err := json.Marshal(op.Responses.Status(status).Value.Content["application/json"].Example)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		return v
	}
	call := func(method, path, body string, headers ...string) (int, any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer any-token")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: not JSON: %s", method, path, b)
		}
		return resp.StatusCode, v
	}
	if st, got := call(http.MethodGet, "/orders", ""); st != http.StatusOK || !reflect.DeepEqual(got, example("/orders", http.MethodGet, 200)) {
		t.Fatalf("GET /orders: %d %v, want 200 with the spec's example", st, got)
	}
	if st, got := call(http.MethodPost, "/orders", `{"description":"Paint the fence","price":"120.50"}`); st != http.StatusCreated ||
		!reflect.DeepEqual(got, example("/orders", http.MethodPost, 201)) {
		t.Fatalf("POST /orders with a decimal string price: %d %v, want 201 with the spec's example", st, got)
	}
	if st, got := call(http.MethodGet, "/orders?size=abc", ""); st != http.StatusBadRequest ||
		!reflect.DeepEqual(got, example("/orders", http.MethodGet, 400)) {
		t.Fatalf("GET /orders?size=abc: %d %v, want the spec's 400 example", st, got)
	}
	// Where an operation also documents a 422 (POST /orders: a reused Idempotency-Key), Prism
	// answers a request that breaks the spec with that example instead, whatever Prefer says.
	if st, got := call(http.MethodPost, "/orders", `{"description":"Paint the fence","price":"12,50"}`); st != http.StatusUnprocessableEntity ||
		!reflect.DeepEqual(got, example("/orders", http.MethodPost, 422)) {
		t.Fatalf("POST /orders with a malformed price: %d %v, want the spec's 422 example (Prism's preference)", st, got)
	}
}

// TestMake_AuthMockCarriesItsCookies: the auth mock's login sets the JWT and XSRF-TOKEN cookies (the
// spec's Set-Cookie example, the two joined in one line as proxies send them), and a client that
// sends them back with the X-XSRF-TOKEN echo gets the session routes' examples; without them, the
// mock refuses as the server would.
func TestMake_AuthMockCarriesItsCookies(t *testing.T) {
	t.Parallel()
	base := startMock(t, auth)
	resp, err := http.Post(base+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cookies := map[string]string{}
	for _, line := range resp.Header.Values("Set-Cookie") {
		for _, c := range splitSetCookie(line) {
			name, value, _ := strings.Cut(strings.TrimSpace(strings.Split(c, ";")[0]), "=")
			cookies[name] = value
		}
	}
	if resp.StatusCode != http.StatusOK || cookies["JWT"] == "" || cookies["XSRF-TOKEN"] == "" {
		t.Fatalf("mock login: %d, Set-Cookie %q; want 200 setting JWT and XSRF-TOKEN", resp.StatusCode, resp.Header.Values("Set-Cookie"))
	}
	user := func(withSession bool) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/auth/user", nil)
		if withSession {
			req.Header.Set("Cookie", "JWT="+cookies["JWT"]+"; XSRF-TOKEN="+cookies["XSRF-TOKEN"])
			req.Header.Set("X-XSRF-TOKEN", cookies["XSRF-TOKEN"])
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Body.Close()
		return r.StatusCode
	}
	if st := user(true); st != http.StatusOK {
		t.Fatalf("GET /auth/user with the mock's cookies: %d, want 200", st)
	}
	if st := user(false); st != http.StatusUnauthorized {
		t.Fatalf("GET /auth/user without a session: %d, want 401", st)
	}
}

// splitSetCookie splits a Set-Cookie line that joins several cookies with commas (as proxies and
// the mock send them) into one string per cookie; a comma inside an Expires date does not split.
func splitSetCookie(line string) []string {
	var out []string
	start := 0
	for _, m := range regexp.MustCompile(`,\s*[^;,=\s]+=`).FindAllStringIndex(line, -1) {
		out = append(out, strings.TrimSpace(line[start:m[0]]))
		start = m[0] + 1
	}
	return append(out, strings.TrimSpace(line[start:]))
}
