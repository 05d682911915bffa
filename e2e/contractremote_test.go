//go:build contractremote

// `make contract-remote-check` (not part of make test) runs this file's test: it runs make contract
// BASE_URL=... itself, a suite inside a suite, so make test proves each remote suite once through
// Prism in the contract run instead (the remote mode differs only in the harness's startServer, which
// TestMake_ModeListsHold checks the CONTRACT_REMOTE list against).

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestMake_ContractAgainstARunningServer runs `make contract BASE_URL=...` against a server this
// test starts on its own, as an operator points it at a staging deployment: the remote suites of
// all three surfaces must pass through the Prism proxies, and the server must have seen their
// requests.
func TestMake_ContractAgainstARunningServer(t *testing.T) {
	t.Parallel()
	ensureNodeModules(t)
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(10*time.Minute))
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
