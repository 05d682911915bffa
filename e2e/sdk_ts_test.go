package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTypeScriptSDK runs the Node tests of the TypeScript SDK (clients/ts/test/*.test.mjs, node's
// own test runner) against a fresh server: through the typed openapi-fetch clients they register
// and log in, place, take, pass and accept an order, and subscribe to a brand. `make test`
// type-checks the same files with tsc first (make check-sdk).
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the TypeScript SDK tests need Node.js 20 or later on PATH: %v", err)
	}
	ensureNodeModules(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "clients", "ts", "test", "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no TypeScript SDK tests in clients/ts/test (%v)", err)
	}
	srv := startServer(t, orders, brands, auth)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(),
		"TRIAD_ORDERS_URL="+srv.Base(orders),
		"TRIAD_BRANDS_URL="+srv.Base(brands),
		"TRIAD_AUTH_URL="+srv.Base(auth),
		"TRIAD_ORDERS_CLIENT_ID="+ordersClientID,
		"TRIAD_ORDERS_CLIENT_SECRET="+ordersClientSecret,
		"TRIAD_E2E_PRISM="+os.Getenv("TRIAD_E2E_PRISM"),
		"NO_COLOR=1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("node --test:\n%s", out)
}
