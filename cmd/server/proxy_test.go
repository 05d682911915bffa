package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_TrustedProxyClientAddress: behind a trusted proxy the login throttle counts the
// client X-Forwarded-For names, so clients behind one proxy do not share one count: ten wrong
// passwords for one account from one client block that client only.
func TestServer_TrustedProxyClientAddress(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t), "-trusted-proxies", "127.0.0.0/8")
	login := func(client string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/api/user/login",
			strings.NewReader(url.Values{"email": {"demo@brands.test"}, "password": {"wrong-password"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 10 {
		if code := login("203.0.113.1"); code != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, code)
		}
	}
	if code := login("203.0.113.1"); code != http.StatusTooManyRequests {
		t.Fatalf("11th wrong password from one client: %d, want 429", code)
	}
	if code := login("203.0.113.2"); code != http.StatusUnauthorized {
		t.Fatalf("another client behind the same proxy: %d, want 401 (not blocked)", code)
	}
}
