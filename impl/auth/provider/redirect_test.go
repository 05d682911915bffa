package provider_test

import (
	"testing"

	"github.com/triadhq/triad/impl/auth/provider"
)

func TestRedirect_OnlyOwnAndAllowedHosts(t *testing.T) {
	ok := provider.NewRedirectValidator("https://site.example.com:8443", []string{"partner.example.org"})
	tests := []struct {
		from string
		want bool
	}{
		{"https://site.example.com:8443/after", true},
		{"http://site.example.com/after", true},
		{"https://PARTNER.example.org/x", true},
		{"/relative/path?q=1", true},
		{"", false},
		{"https://evil.example.com/", false},
		{"https://site.example.com.evil.com/", false},
		{"//evil.example.com/x", false},
		{"/\\evil.example.com", false},
		{"https://site.example.com@evil.example.com/", false},
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
}
