package httpapi

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// TestNewService_ProdRefusesTheDevProvider: the dev provider named among the built-ins stops a
// prod start (it logs anyone in); dev mode takes it.
func TestNewService_ProdRefusesTheDevProvider(t *testing.T) {
	t.Parallel()
	s := Settings{Secret: kit.Secret(strings.Repeat("k", 32)), URL: "http://127.0.0.1:1", Builtins: []string{"dev::"}}
	if _, err := newService(s, false, false, slog.New(slog.DiscardHandler), nil, nil, metrics.Events{}); err == nil || !strings.Contains(err.Error(), "development only") {
		t.Fatalf("dev provider in prod: %v", err)
	}
}

// TestRedirectHosts_DevOriginsInDevOnly: a login's `from` on a SPA dev server (the origins dev-mode
// CORS admits) is followed in dev mode; prod mode follows only the public URL and the allowed hosts.
func TestRedirectHosts_DevOriginsInDevOnly(t *testing.T) {
	t.Parallel()
	const devURL, prodURL = "http://127.0.0.1:9090", "https://api.example.test"
	prodAllowed := []string{"https://app.example.test"}
	for _, tc := range []struct {
		dev  bool
		from string
		want bool
	}{
		{true, "http://localhost:5173/account", true},
		{true, "http://127.0.0.1:3000/", true},
		{true, "http://localhost:4200/x", true},
		{true, "http://127.0.0.1:9090/app", true},
		{true, "http://localhost:5174/", false},
		{true, "https://localhost:5173/", false},
		{true, "http://evil.example/", false},
		{false, "http://localhost:5173/account", false},
		{false, "http://127.0.0.1:3000/", false},
		{false, "https://app.example.test/home", true},
		{false, "https://api.example.test/x", true},
	} {
		base, allowed := devURL, []string(nil)
		if !tc.dev {
			base, allowed = prodURL, prodAllowed
		}
		ok := provider.NewRedirectValidator(base, redirectHosts(allowed, tc.dev))(tc.from)
		if ok != tc.want {
			t.Errorf("dev %v, from %s: followed %v, want %v", tc.dev, tc.from, ok, tc.want)
		}
	}
}
