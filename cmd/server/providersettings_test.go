package main

import (
	"context"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth"
	authhttp "github.com/triadhq/triad/impl/surfaces/auth/httpapi"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func TestProviderSecretsMasked(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig([]string{"-auth-github-cid", "gh-id", "-auth-github-csecret", "gh-s3cret",
		"-auth-telegram-token", "123:tg-s3cret", "-auth-apple-key", "apple-s3cret", "-auth-custom-providers", `[{"csecret":"custom-s3cret"}]`})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	newLoggerTo(&sb, c).Info("config", "config", c)
	for _, leak := range []string{"gh-s3cret", "tg-s3cret", "apple-s3cret", "custom-s3cret"} {
		if strings.Contains(sb.String(), leak) {
			t.Fatalf("log line leaks %s: %s", leak, sb.String())
		}
	}
}

// TestProviderSettingsFromEnv: the documented environment variables (not only the flags) reach the
// auth surface's provider settings (which providers they enable: impl/surfaces/auth/httpapi's
// TestAddProviders). Not parallel: it sets the process environment.
func TestProviderSettingsFromEnv(t *testing.T) {
	t.Setenv("AUTH_GOOGLE_CID", "g-id")
	t.Setenv("AUTH_GOOGLE_CSECRET", "g-secret")
	t.Setenv("AUTH_MICROSOFT_CID", "ms-id")
	t.Setenv("AUTH_MICROSOFT_CSECRET", "ms-secret")
	t.Setenv("AUTH_MICROSOFT_TENANT", "consumers")
	t.Setenv("AUTH_BATTLENET_CID", "bn-id")
	t.Setenv("AUTH_BATTLENET_CSECRET", "bn-secret")
	cfg, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Auth.Providers
	want := map[string]authhttp.OAuthClient{"google": {ID: "g-id", Secret: "g-secret"}, "microsoft": {ID: "ms-id", Secret: "ms-secret"},
		"battlenet": {ID: "bn-id", Secret: "bn-secret"}}
	for name, cl := range p.Clients {
		if *cl != want[name] {
			t.Errorf("client %s from env: %+v, want %+v", name, *cl, want[name])
		}
	}
	if p.MicrosoftTenant != "consumers" {
		t.Errorf("microsoft tenant from env: %q", p.MicrosoftTenant)
	}
	svc, err := auth.New(auth.Options{URL: "http://site.example",
		SecretReader: token.SecretFunc(func(string) (string, error) { return "0123456789abcdef0123456789abcdef", nil })})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := authhttp.AddProviders(context.Background(), svc, p, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(svc.Providers(), ","); got != "google,microsoft,battlenet" {
		t.Fatalf("providers %s", got)
	}
}
