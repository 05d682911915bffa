package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// makeFlags are the arguments of a make run from a test: the npm packages are never reinstalled
// (npm ci would empty node_modules under the tests running beside this one; ensureNodeModules has
// installed them when they were missing).
func makeFlags(args ...string) []string {
	return append([]string{"--no-print-directory", "-o", "node_modules/.installed"}, args...)
}

// TestMake_MockServesTheSpecExamples runs `make mock` for the orders spec on a free port, as a
// frontend team does before the backend exists, and checks that it answers with the spec's
// examples and takes a price as a decimal string.
func TestMake_MockServesTheSpecExamples(t *testing.T) {
	t.Parallel()
	ensureNodeModules(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "make", makeFlags("mock", "MOCK_SPECS=orders", fmt.Sprintf("MOCK_ORDERS_PORT=%d", port))...)
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
		t.Fatalf("make mock ended before listening:\n%s", out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("make mock did not listen within 2 minutes:\n%s", out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("mock orders: http://127.0.0.1:%d", port)) {
		t.Fatalf("make mock did not say where orders is served:\n%s", out.String())
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
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
	call := func(method, path, body string) (int, any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer any-token")
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
	if st, got := call(http.MethodPost, "/orders", `{"description":"Paint the fence","price":"12,50"}`); st != http.StatusBadRequest ||
		!reflect.DeepEqual(got, example("/orders", http.MethodPost, 400)) {
		t.Fatalf("POST /orders with a malformed price: %d %v, want the spec's 400 example", st, got)
	}
}

// TestMake_ContractAgainstARunningServer runs `make contract BASE_URL=...` against a server this
// test starts on its own, as an operator points it at a staging deployment: the remote suites of
// all three surfaces must pass through the Prism proxies, and the server must have seen their
// requests.
func TestMake_ContractAgainstARunningServer(t *testing.T) {
	t.Parallel()
	ensureNodeModules(t)
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", makeFlags("contract", "BASE_URL="+srv.URL)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "TRIAD_E2E_ORDERS_CLIENT_ID="+ordersClientID, "TRIAD_E2E_ORDERS_CLIENT_SECRET="+ordersClientSecret)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make contract BASE_URL=%s: %v\n%s", srv.URL, err, out.String())
	}
	for _, want := range []string{
		"--- PASS: TestSpecs_ServedAsInTheRepository",
		"--- PASS: TestOrders_LifecycleThroughGeneratedClient",
		"--- PASS: TestOrders_RefusalsThroughGeneratedClient",
		"--- PASS: TestBrands_LogoutEndsEveryToken",
		"--- PASS: TestBrands_AdminThroughGeneratedClient",
		"--- PASS: TestAuth_DirectLoginThroughGeneratedClient",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("make contract BASE_URL= did not run %q:\n%s", strings.TrimPrefix(want, "--- PASS: "), out.String())
		}
	}
	if regexp.MustCompile(`--- (FAIL|SKIP)`).MatchString(out.String()) {
		t.Fatalf("make contract BASE_URL= reported failures:\n%s", out.String())
	}
	// The suites' users are in the server's database: the run went to this server.
	conn, err := pgx.Connect(ctx, srv.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM order_users WHERE username LIKE 'e2e-customer-%'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("users the contract run registered on the server: %d (%v), want 1", n, err)
	}
}
