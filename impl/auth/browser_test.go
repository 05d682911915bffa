package auth_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium; `make test` installs it when missing (make deps-chromium).
func chromiumPath(t *testing.T) string {
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
func profileDir(t *testing.T) string {
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

// TestBrowser_DevLogin drives a real headless Chromium through the demo page: it clicks the dev
// provider, types a user name on the dev OAuth 2.0 server's login page, submits, and lands back on
// the page logged in. It proves the redirects, the cookies (SameSite=Lax across the OAuth
// round trip), the XSRF header the page sends and both pages' CSPs work in a browser.
func TestBrowser_DevLogin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	opts := append([]chromedp.ExecAllocatorOption{},
		chromedp.ExecPath(chromiumPath(t)),
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var status, devURL, finalURL string
	err := chromedp.Run(bctx,
		chromedp.Navigate(s.srv.URL+"/auth"),
		chromedp.WaitVisible(`#status[data-user=""]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#login-dev`, chromedp.ByQuery),
		chromedp.Click(`#login-dev`, chromedp.ByQuery),
		chromedp.WaitVisible(`#username`, chromedp.ByQuery),
		chromedp.Location(&devURL),
		chromedp.SetValue(`#username`, "chrome_user", chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#status[data-user="chrome_user"]`, chromedp.ByQuery),
		chromedp.Text(`#status`, &status, chromedp.ByQuery),
		chromedp.Location(&finalURL),
	)
	if err != nil {
		t.Fatalf("browser: %v (dev page %q, status %q)", err, devURL, status)
	}
	if !strings.HasPrefix(devURL, s.svc.DevProvider().URL()) {
		t.Fatalf("login went to %s, not the dev server", devURL)
	}
	if finalURL != s.srv.URL+"/auth" || !strings.Contains(status, "logged in as chrome_user (dev_") {
		t.Fatalf("after login: %s %q", finalURL, status)
	}

	// Logging out from the page clears the session.
	err = chromedp.Run(bctx,
		chromedp.Click(`#logout`, chromedp.ByQuery),
		chromedp.WaitVisible(`#status[data-user=""]`, chromedp.ByQuery),
		chromedp.Text(`#status`, &status, chromedp.ByQuery),
	)
	if err != nil || status != "not logged in" {
		t.Fatalf("logout: %v %q", err, status)
	}
}
