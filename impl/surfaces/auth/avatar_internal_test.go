package auth

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestAvatar_RefusalsReachTheServiceLogger: a picture the proxy refuses at login (here a private
// address) still gives the user an identicon, and the refusal is logged through Options.Logger
// as a warning without the picture URL, which may carry a token.
func TestAvatar_RefusalsReachTheServiceLogger(t *testing.T) {
	t.Parallel()
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logw lockedBuffer
	svc, err := New(Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "secret-secret-secret-secret-32by", nil }),
		URL:          "https://site.example",
		AvatarStore:  store,
		Logger:       logger.FromSlog(slog.New(slog.NewTextHandler(&logw, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	link, err := svc.avatar.Put(context.Background(), "github_x", "http://10.0.0.1/file/bot1:TOKEN/a.png")
	if err != nil {
		t.Fatal(err)
	}
	if link != "https://site.example/avatar/"+avatar.AvatarID("github_x") {
		t.Fatalf("link %q", link)
	}
	all := logw.String()
	if !strings.Contains(all, "level=WARN msg=\"avatar: picture refused") || !strings.Contains(all, "address not allowed") ||
		strings.Contains(all, "TOKEN") {
		t.Fatalf("log lines:\n%s", all)
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
