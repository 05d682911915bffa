package auth_test

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestOptions_Logger: the service logs through Options.Logger (a *slog.Logger as logger.FromSlog), e.g.
// the dev server's start and the middleware's refusals.
func TestOptions_Logger(t *testing.T) {
	t.Parallel()
	var logw lockedBuffer
	s := newSite(t, func(o *auth.Options) {
		o.Logger = logger.FromSlog(slog.New(slog.NewTextHandler(&logw, &slog.HandlerOptions{Level: slog.LevelDebug})))
	})
	if st, _, _ := s.do(s.plain, http.MethodGet, "/app/private", nil, nil); st != 401 {
		t.Fatalf("anonymous: %d", st)
	}
	all := logw.String()
	if !strings.Contains(all, `level=INFO msg="dev OAuth2 server (development only)" url=http://127.0.0.1:`) ||
		!strings.Contains(all, `level=DEBUG msg="auth refused" method=GET path=/app/private`) {
		t.Fatalf("log lines:\n%s", all)
	}
}

// TestOptions_AvatarRoutePath: links to proxied avatars follow AvatarRoutePath, where the
// application mounts the avatar handler.
func TestOptions_AvatarRoutePath(t *testing.T) {
	t.Parallel()
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	s := newSite(t, func(o *auth.Options) { o.AvatarStore = store; o.AvatarRoutePath = "/pics" })
	u := s.directLogin("")
	want := s.srv.URL + "/pics/" + avatar.AvatarID(u.ID)
	if u.Picture != want {
		t.Fatalf("picture %q, want %q", u.Picture, want)
	}
	// /pics is this application's own route, outside api/auth.yaml: fetched with the plain client.
	st, h, b := s.do(s.plain, http.MethodGet, strings.TrimPrefix(u.Picture, s.srv.URL), nil, nil)
	if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "image/") || len(b) == 0 {
		t.Fatalf("avatar at /pics: %d %s", st, h.Get("Content-Type"))
	}
}

// TestHandlers_SecurityHeadersOnEveryResponse: JSON answers, refusals and redirects of the auth
// handler all carry nosniff and the deny-all CSP; the demo page carries its own nonce CSP.
func TestHandlers_SecurityHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	tests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/auth/list", 200},
		{"GET", "/auth/status", 200},
		{"GET", "/auth/user", 401},
		{"GET", "/auth/nope/login", 400},
		{"GET", "/auth/dev/login", 302},
		{"GET", "/auth/local/login?user=demo&passwd=x", 403},
		{"GET", "/auth/local/login?user=demo&passwd=demo-password", 200},
		{"POST", "/auth/logout", 200},
		{"GET", "/auth/no/such/route", 404},
		{"PUT", "/auth/list", 405},
	}
	for _, tt := range tests {
		st, h, _ := s.do(s.plain, tt.method, tt.path, nil, nil)
		if st != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, st, tt.want)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'; frame-ancestors 'none'") ||
			h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s: headers %v", tt.method, tt.path, h)
		}
	}
	st, h, _ := s.get("/auth", nil)
	csp := h.Get("Content-Security-Policy")
	if st != 200 || !strings.Contains(csp, "script-src 'nonce-") || strings.Contains(csp, "unsafe-inline") || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("demo page: %d %q", st, csp)
	}
}

// TestAddProvider_DevDefaultPort: AddProvider("dev", "", "") starts the dev OAuth 2.0 server on its
// documented port 8084, or fails saying so when another process holds it.
func TestAddProvider_DevDefaultPort(t *testing.T) {
	t.Parallel()
	svc, err := auth.New(auth.Options{SecretReader: token.SecretFunc(func(string) (string, error) { return testSecret, nil }), URL: "http://localhost"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	err = svc.AddProvider("dev", "", "")
	if errors.Is(err, syscall.EADDRINUSE) {
		t.Logf("port 8084 is busy on this machine: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.DevProvider().URL(); got != "http://127.0.0.1:"+strconv.Itoa(provider.DefaultDevPort) {
		t.Fatalf("dev server at %s", got)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:8084"); err != nil {
		t.Fatalf("nothing listens on 8084: %v", err)
	} else {
		c.Close()
	}
	if names := svc.Providers(); len(names) != 1 || names[0] != "dev" {
		t.Fatalf("providers %v", names)
	}
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
