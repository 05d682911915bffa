package auth_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// loginVariant decodes a 200 login body the way a generated client does: through the spec's
// oneOf and its discriminator (status), into the variant's own type.
func loginVariant(t *testing.T, b []byte) any {
	t.Helper()
	var body authapi.AuthLogin200JSONResponseBody
	if err := body.UnmarshalJSON(b); err != nil {
		t.Fatalf("login body %s: %v", b, err)
	}
	v, err := body.ValueByDiscriminator()
	if err != nil {
		t.Fatalf("login body %s: %v", b, err)
	}
	return v
}

// TestLogin_BodiesNameTheirVariant: GET /auth/{provider}/login answers 200 with one of three
// bodies, and status tells them apart: a completed login ("logged in", the user), a sent
// confirmation ("sent"), a pending messenger request ("pending"; cmd/server's Telegram test). The
// client here validates each against api/auth.yaml, where the discriminator is declared.
func TestLogin_BodiesNameTheirVariant(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	var mu sync.Mutex
	var confirmation string
	err := s.svc.AddVerifProvider("email", `{{.Token}}`, provider.SenderFunc(func(_, text string) error {
		mu.Lock()
		defer mu.Unlock()
		confirmation = text
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}

	st, _, b := s.get("/auth/local/login?user=demo&passwd=demo-password&aud=triad", nil)
	if st != http.StatusOK {
		t.Fatalf("direct login: %d %s", st, b)
	}
	if u, ok := loginVariant(t, b).(authapi.LoggedInUser); !ok || u.Name != "demo" || u.Status != authapi.LoggedInUserStatusLoggedIn || !strings.HasPrefix(u.Id, "local_") {
		t.Fatalf("direct login decoded as %#v from %s, want a LoggedInUser demo", loginVariant(t, b), b)
	}

	st, _, b = s.get("/auth/email/login?user=alice&address=alice@example.com&aud=triad", nil)
	if st != http.StatusOK {
		t.Fatalf("verified send: %d %s", st, b)
	}
	if v, ok := loginVariant(t, b).(authapi.Sent); !ok || v.Address != "alice@example.com" {
		t.Fatalf("verified send decoded as %#v from %s, want Sent", loginVariant(t, b), b)
	}

	mu.Lock()
	tok := confirmation
	mu.Unlock()
	st, _, b = s.get("/auth/email/login?token="+tok, nil)
	if st != http.StatusOK {
		t.Fatalf("verified confirm: %d %s", st, b)
	}
	if u, ok := loginVariant(t, b).(authapi.LoggedInUser); !ok || u.Name != "alice" || u.Email == nil || *u.Email != "alice@example.com" {
		t.Fatalf("verified confirm decoded as %#v from %s, want a LoggedInUser alice", loginVariant(t, b), b)
	}
}
