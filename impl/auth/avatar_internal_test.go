package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/auth/logger"
	"github.com/triadhq/triad/impl/auth/token"
	"github.com/triadhq/triad/impl/avatar"
)

// TestAvatar_RefusalsReachTheServiceLogger: a picture the proxy refuses at login (here a private
// address) still gives the user an identicon, and the refusal is logged through Options.Logger
// as a [WARN] line without the picture URL, which may carry a token.
func TestAvatar_RefusalsReachTheServiceLogger(t *testing.T) {
	t.Parallel()
	store, err := avatar.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	svc, err := New(Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "secret-secret-secret-secret-32by", nil }),
		URL:          "https://site.example",
		AvatarStore:  store,
		Logger: logger.Func(func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		}),
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
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "[WARN] avatar: picture refused") || !strings.Contains(all, "address not allowed") ||
		strings.Contains(all, "TOKEN") {
		t.Fatalf("log lines:\n%s", all)
	}
}
