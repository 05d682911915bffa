// Package browsertest gives tests a headless Chromium driven by chromedp: the Debian chromium
// binary (installed by `make deps-chromium`), a fresh profile per test, and the flags that keep it
// quiet on a shared machine.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds Debian's chromium and fails the test when it is missing.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run `make deps-chromium` (apt-get install chromium)")
	return ""
}

// profileDir is a fresh Chromium profile. Not t.TempDir: Chromium's helper processes may still
// write into it for a moment after the browser is closed, so removal is retried and a leftover is
// not a test failure.
func profileDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "triad-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// New starts a headless Chromium for the test and returns its chromedp context, cancelled (and the
// browser closed) when the test ends. The browser has no deadline of its own: a wall-clock one ends
// a healthy walk on a busy machine (the Swagger walk outlived a fixed 12 minutes at load 22). A test
// bounds its steps itself, with waits that stretch with the load (impl/testkit/patience); go test's
// -timeout is the backstop.
func New(t testing.TB) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{},
		chromedp.ExecPath(Path(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profileDir(t)),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	ctx, cancel := context.WithCancel(context.Background())
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		bcancel()
		acancel()
		cancel()
	})
	return bctx
}
