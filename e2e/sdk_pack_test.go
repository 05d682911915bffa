package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

var (
	sdkOnce    sync.Once
	sdkTarball string
	sdkErr     string
	sdkPackDir string // removed when the test process ends (TestMain)
)

// packSDK runs `npm pack` in clients/ts, which builds the package first (its prepack script runs
// tsc, leaving each surface's index.js and index.d.ts beside its sources), and returns the tarball.
// It packs once per test process, into a folder TestMain removes at the end (sdkPackDir).
func packSDK(t *testing.T) string {
	t.Helper()
	ensureNodeModules(t)
	sdkOnce.Do(func() {
		dir, err := os.MkdirTemp("", "triad-sdk-pack-")
		sdkPackDir = dir
		if err != nil {
			sdkErr = err.Error()
			return
		}
		cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir)
		cmd.Dir = filepath.Join(repoRoot, "clients", "ts")
		out, err := cmd.Output()
		if err != nil {
			sdkErr = "npm pack: " + err.Error() + "\n" + string(out) + stderrOf(err)
			return
		}
		lines := strings.Fields(string(out))
		if len(lines) == 0 {
			sdkErr = "npm pack printed no file name"
			return
		}
		sdkTarball = filepath.Join(dir, lines[len(lines)-1])
	})
	if sdkErr != "" {
		t.Fatal(sdkErr)
	}
	return sdkTarball
}

// stderrOf is what a failed command wrote to stderr, when exec kept it.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// run runs a command in dir and fails the test with its output when it fails.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestSDKPackage installs the packed TypeScript SDK into a scratch project as an application would
// (`npm install <tarball>`, offline: the SDK has no dependencies), type-checks a program importing
// every surface by its package export with tsc in strict mode against the browser's types only, and
// runs it against a server: it registers and logs in on orders and places an order, logs in on brands,
// and reads auth's providers and a refused login. `make sdk-pack` runs this test alone.
//
// It proves the package, not the calls' contract, so it talks to the server itself in every mode
// (make contract leaves it out): the SDK's calls through Prism's validation are TestTypeScriptSDK's,
// over the same sources the package is built from.
func TestSDKPackage(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the SDK package test needs Node.js 20 or later on PATH: %v", err)
	}
	tarball := packSDK(t)
	srv := startServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(3*time.Minute))
	defer cancel()
	app := t.TempDir()
	if err := os.WriteFile(filepath.Join(app, "package.json"),
		[]byte(`{"name": "scratch-app", "private": true, "type": "module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tsconfig.json", "main.ts"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sdkpack", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, app, nil, "npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball)

	// The package declares no dependencies, so the install added exactly one package.
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(app, "node_modules", "@triad", "sdk", "package.json"))
	if err != nil {
		t.Fatalf("the tarball did not install as @triad/sdk: %v", err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil || len(manifest.Dependencies) != 0 {
		t.Fatalf("@triad/sdk's package.json: dependencies %v (want none), %v", manifest.Dependencies, err)
	}

	// The repository's pinned tsc compiles the program, strict, against the installed .d.ts files.
	run(t, ctx, app, nil, filepath.Join(repoRoot, "node_modules", ".bin", "tsc"), "-p", ".")

	out := run(t, ctx, app, []string{
		"TRIAD_ORDERS_URL=" + srv.Base(orders),
		"TRIAD_BRANDS_URL=" + srv.Base(brands),
		"TRIAD_AUTH_URL=" + srv.Base(auth),
		"TRIAD_ORDERS_CLIENT_ID=" + ordersClientID,
		"TRIAD_ORDERS_CLIENT_SECRET=" + ordersClientSecret,
	}, node, filepath.Join("out", "main.js"))
	var got struct {
		Order struct {
			Status     string `json:"status"`
			Price      string `json:"price"`
			CustomerID int64  `json:"customerId"`
			UserID     int64  `json:"userId"`
		} `json:"order"`
		BrandsUser string   `json:"brandsUser"`
		Providers  []string `json:"providers"`
		Refused    struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		} `json:"refused"`
		XSRF string `json:"xsrf"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
		t.Fatalf("the scratch app printed %q: %v", out, err)
	}
	if got.Order.Status != "WAITING" || got.Order.Price != "12.5" || got.Order.CustomerID != got.Order.UserID || got.Order.UserID == 0 {
		t.Errorf("order placed through the SDK: %+v, want WAITING at 12.5 owned by the new user", got.Order)
	}
	if got.BrandsUser != "demo@brands.test" {
		t.Errorf("brands /api/user/me through the SDK: %q, want demo@brands.test", got.BrandsUser)
	}
	if strings.Join(got.Providers, ",") != "dev,local" {
		t.Errorf("auth providers through the SDK: %v, want [dev local]", got.Providers)
	}
	if got.Refused.Status != 403 || got.Refused.Code != "bad_credentials" {
		t.Errorf("a wrong auth password through the SDK: %+v, want 403 bad_credentials", got.Refused)
	}
	if got.XSRF != "abc=" {
		t.Errorf("xsrfToken read %q from a cookie string, want abc=", got.XSRF)
	}
}
