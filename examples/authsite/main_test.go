package main

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/impl/testkit/browsertest"
)

// TestAuthsite_Browser starts the site as `go run` does (a free port, the URL printed) and drives
// it in headless Chromium: a dev login through the dev OAuth 2.0 server's page, the avatar image
// loading from the site, the protected JSON route called with the XSRF header, logout, a refused
// and then an accepted direct login.
func TestAuthsite_Browser(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", 0, "", pw) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}

	b := browsertest.New(t)
	var devPage, me, status, uid string
	err = chromedp.Run(b,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`#user[data-name=""]`, chromedp.ByQuery),
		chromedp.Click(`#login-dev`, chromedp.ByQuery),
		chromedp.WaitVisible(`#username`, chromedp.ByQuery),
		chromedp.Location(&devPage),
		chromedp.SetValue(`#username`, "chrome_user", chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#user[data-name="chrome_user"]`, chromedp.ByQuery),
		chromedp.Text(`#uid`, &uid, chromedp.ByQuery),
		// The avatar is an identicon the site stored at login and serves from /avatar/.
		chromedp.Poll(`(() => { const i = document.getElementById("avatar");
			return i.complete && i.naturalWidth > 0 && new URL(i.src).pathname.startsWith("/avatar/"); })()`, nil),
		chromedp.Click(`#load-me`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("me").textContent.startsWith("200 ")`, nil),
		chromedp.Text(`#me`, &me, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("dev login: %v (dev page %q, /api/me %q)", err, devPage, me)
	}
	if strings.HasPrefix(devPage, url) || !strings.HasPrefix(uid, "dev_") || !strings.Contains(me, `"name":"chrome_user"`) {
		t.Fatalf("dev page %q, id %q, /api/me %q", devPage, uid, me)
	}

	var errText string
	err = chromedp.Run(b,
		chromedp.Click(`#logout`, chromedp.ByQuery),
		chromedp.WaitVisible(`#user[data-name=""]`, chromedp.ByQuery),
		chromedp.SetValue(`#direct-user`, "demo", chromedp.ByQuery),
		chromedp.SetValue(`#direct-passwd`, "wrong", chromedp.ByQuery),
		chromedp.Click(`#direct-submit`, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("direct-error").textContent !== ""`, nil),
		chromedp.Text(`#direct-error`, &errText, chromedp.ByQuery),
		chromedp.SetValue(`#direct-passwd`, "demo-password", chromedp.ByQuery),
		chromedp.Click(`#direct-submit`, chromedp.ByQuery),
		chromedp.WaitVisible(`#user[data-name="demo"]`, chromedp.ByQuery),
		chromedp.Text(`#user`, &status, chromedp.ByQuery),
	)
	if err != nil || errText != "incorrect user or password" || status != "logged in as demo" {
		t.Fatalf("direct login: %v, error %q, status %q", err, errText, status)
	}
}
