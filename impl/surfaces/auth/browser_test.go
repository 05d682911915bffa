package auth_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/impl/testkit/browsertest"
)

// TestBrowser_DevLogin drives a real headless Chromium through the demo page: it clicks the dev
// provider, types a user name on the dev OAuth 2.0 server's login page, submits, and lands back on
// the page logged in. It proves the redirects, the cookies (SameSite=Lax across the OAuth
// round trip), the XSRF header the page sends and both pages' CSPs work in a browser.
func TestBrowser_DevLogin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	// No deadline of its own (browsertest.New): on a loaded machine a browser run takes minutes.
	bctx := browsertest.New(t)

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

	// Logging out from the page clears the session, and ends it: the token the browser held,
	// captured before, is refused.
	var jwt string
	err = chromedp.Run(bctx,
		chromedp.ActionFunc(func(ctx context.Context) error {
			cookies, err := network.GetCookies().Do(ctx)
			for _, c := range cookies {
				if c.Name == "JWT" {
					jwt = c.Value
				}
			}
			return err
		}),
		chromedp.Click(`#logout`, chromedp.ByQuery),
		chromedp.WaitVisible(`#status[data-user=""]`, chromedp.ByQuery),
		chromedp.Text(`#status`, &status, chromedp.ByQuery),
	)
	if err != nil || status != "not logged in" {
		t.Fatalf("logout: %v %q", err, status)
	}
	if st, _, b := s.get("/auth/user", map[string]string{"X-JWT": jwt}); jwt == "" || st != http.StatusUnauthorized {
		t.Fatalf("the token captured before the page's logout: %d %s (token %q), want 401", st, b, jwt)
	}
}
