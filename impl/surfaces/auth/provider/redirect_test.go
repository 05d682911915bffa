package provider_test

import (
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

func TestRedirect_OnlyExactOriginsOfServiceAndAllowedHosts(t *testing.T) {
	ok := provider.NewRedirectValidator("https://site.example.com:8443",
		[]string{"partner.example.org", "app.example.net:3000", "https://pay.example.com:9443", "bad entry/", "ftp://x.example"})
	tests := []struct {
		from string
		want bool
	}{
		{"https://site.example.com:8443/after", true},
		{"https://SITE.example.com:8443/after", true},
		{"/relative/path?q=1", true},
		// The service's origin is exact: another scheme or port of the same host is another origin.
		{"http://site.example.com:8443/after", false},
		{"http://site.example.com/after", false},
		{"https://site.example.com/after", false},
		{"https://site.example.com:9999/after", false},
		// A bare allowed host: default ports only.
		{"https://PARTNER.example.org/x", true},
		{"https://partner.example.org:443/x", true},
		{"http://partner.example.org/x", true},
		{"https://partner.example.org:8443/x", false},
		{"http://partner.example.org:8080/x", false},
		// host:port: that port, either scheme.
		{"http://app.example.net:3000/x", true},
		{"https://app.example.net:3000/x", true},
		{"http://app.example.net/x", false},
		// A full origin: exactly it.
		{"https://pay.example.com:9443/x", true},
		{"http://pay.example.com:9443/x", false},
		{"https://pay.example.com/x", false},
		// Unreadable entries widen nothing.
		{"https://bad/x", false},
		{"https://x.example/", false},
		{"", false},
		{"https://evil.example.com/", false},
		{"https://site.example.com.evil.com/", false},
		{"//evil.example.com/x", false},
		{"/\\evil.example.com", false},
		{"https://site.example.com:8443@evil.example.com/", false},
		{"javascript:alert(1)", false},
		{"data:text/html,hi", false},
		{"relative-without-slash", false},
		{"https://evil.example.com\\@site.example.com/", false},
		{"https://site.example.com:8443/\nSet-Cookie: x", false},
	}
	for _, tt := range tests {
		if got := ok(tt.from); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.from, got, tt.want)
		}
	}
	if provider.NewRedirectValidator("https://a.example", nil)("https://b.example/") {
		t.Fatal("default allows a foreign host")
	}
	if !provider.NewRedirectValidator("http://localhost:8080", nil)("http://localhost:8080/x") ||
		provider.NewRedirectValidator("http://localhost:8080", nil)("http://localhost:3000/x") {
		t.Fatal("service origin with an explicit port")
	}
}
