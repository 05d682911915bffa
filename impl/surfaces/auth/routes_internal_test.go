package auth

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestRoutes_MatchTheSpec: the auth and avatar routers serve exactly the paths and methods of
// api/auth.yaml, no more, no fewer. The library is not built on the generated server (see
// docs/auth.md), so this test is what keeps the two from drifting.
func TestRoutes_MatchTheSpec(t *testing.T) {
	t.Parallel()
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for path, item := range spec.Paths.Map() {
		for method := range item.Operations() {
			want = append(want, method+" "+path)
		}
	}
	store, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return "secret-secret-secret-secret-32by", nil }),
		URL:          "https://site.example", AvatarStore: store, LoginPage: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	var got []string
	walk := func(prefix string, r chi.Routes) {
		err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			got = append(got, method+" "+strings.TrimSuffix(prefix+route, "/"))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(DefaultAuthPath, svc.router())
	avatarRoutes, ok := svc.avatarH.(chi.Routes)
	if !ok {
		t.Fatalf("the avatar handler is a %T, not a router", svc.avatarH)
	}
	walk(DefaultAvatarRoutePath, avatarRoutes)
	slices.Sort(want)
	slices.Sort(got)
	for _, r := range want {
		if !slices.Contains(got, r) {
			t.Errorf("in the spec, not routed: %s", r)
		}
	}
	for _, r := range got {
		if !slices.Contains(want, r) {
			t.Errorf("routed, not in the spec: %s", r)
		}
	}
}
