package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestTypeScriptSDK runs the Node tests of the TypeScript SDK (clients/ts/test/*.test.mjs, node's
// own test runner) against a fresh server: through the SDK's typed clients they register
// and log in, place, take, pass and accept an order, subscribe to a brand, and log in to the auth
// service. `make test`
// type-checks the same files with tsc first (make check-sdk).
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node, files := sdkTests(t)
	srv := startServer(t, api.Names()...)
	// The Node tests reach each surface (every spec in api/: a new surface's tests too) through a
	// reverse proxy that validates every response against the spec in process (kin-openapi, as for
	// the Go tests), in front of the server or, in contract mode, of the surface's Prism; the
	// surface's URL is TRIAD_<SURFACE>_URL (clients/ts/test/env.mjs).
	env := os.Environ()
	for _, surface := range api.Names() {
		var bypass func(*http.Request) bool
		if surface == auth {
			bypass = authRedirectsOrCookies
		}
		env = append(env, surfaceURLEnv(surface)+"="+validatingProxy(t, surface, srv, bypass))
	}

	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(5*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(env,
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

// TestTypeScriptSDK_AgainstMock runs the same Node tests against `make mock` (Prism serving each
// spec's examples, one per surface on a free port), as a frontend team does before the backend
// exists: with TRIAD_SDK_AGAINST=mock the suite expects the spec's examples where the server's
// answer follows from state the mock does not keep, and asks the mock for the refusals only state
// causes with Prism's Prefer header (clients/ts/test/env.mjs; docs/specs.md lists each
// difference). `make sdk-mock` runs this test alone.
func TestTypeScriptSDK_AgainstMock(t *testing.T) {
	t.Parallel()
	node, files := sdkTests(t)
	env := append(os.Environ(), "TRIAD_SDK_AGAINST=mock", "NO_COLOR=1",
		// Any client id and secret: the mock checks that the token request carries them, not what they are.
		"TRIAD_ORDERS_CLIENT_ID=triad-orders", "TRIAD_ORDERS_CLIENT_SECRET=any-secret")
	for _, surface := range api.Names() {
		env = append(env, surfaceURLEnv(surface)+"="+startMock(t, surface))
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(5*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = repoRoot
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test against make mock: %v\n%s", err, out)
	}
	t.Logf("node --test against make mock:\n%s", out)
}

// surfaceURLEnv is the variable that tells the Node tests where surface is (env.mjs, baseUrl).
func surfaceURLEnv(surface string) string { return "TRIAD_" + strings.ToUpper(surface) + "_URL" }

// validatingProxy serves a reverse proxy to surface (its Prism in contract mode, except for the
// requests bypass selects) whose responses are validated against the surface's spec, and checked for
// Prism's verdict, like every Go test's responses. It returns the proxy's URL; the proxy stops when
// t ends.
func validatingProxy(t *testing.T, surface string, srv *server, bypass func(*http.Request) bool) string {
	t.Helper()
	target, err := url.Parse(srv.Base(surface))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = httpClientVia(t, loadSpec(t, surface), srv, bypass).Transport
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// sdkTests finds Node.js and the SDK's Node test files, after building each surface's index.js
// (packSDK), which the tests import; both SDK runs start from it.
func sdkTests(t *testing.T) (node string, files []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the TypeScript SDK tests need Node.js 20 or later on PATH: %v", err)
	}
	packSDK(t)
	files, err = filepath.Glob(filepath.Join(repoRoot, "clients", "ts", "test", "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no TypeScript SDK tests in clients/ts/test (%v)", err)
	}
	return node, files
}
