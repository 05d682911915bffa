package main

import (
	"log/slog"
	"net"
	"strings"

	authhttp "github.com/triadhq/triad/impl/surfaces/auth/httpapi"
	brandshttp "github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	ordershttp "github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// The surfaces' own settings, as their mounts take them: the configuration's fields (whose
// secrets mask themselves in the start-up log) handed over as plain values.

// settings are the orders surface's own settings.
func (c OrdersConfig) settings() ordershttp.Settings {
	s := ordershttp.Settings{ClientID: c.ClientID, ClientSecret: string(c.ClientSecret), TokenTTL: c.TokenTTL,
		InProgressTimeout: c.InProgressTimeout, ReadyTimeout: c.ReadyTimeout}
	s.Limits.MaxHeld, s.Limits.RetakeCooldown, s.Limits.ListShare, s.Limits.ListTimeout = c.MaxHeld, c.RetakeCooldown, c.ListShare, c.ListTimeout
	s.Limits.WriteShare = c.WriteShare
	return s
}

// settings are the brands surface's own settings.
func (c BrandsConfig) settings() brandshttp.Settings {
	return brandshttp.Settings{TokenTTL: c.TokenTTL, AdminEmail: c.AdminEmail, AdminPassword: string(c.AdminPassword)}
}

// authSettings are the auth surface's own settings.
func (c Config) authSettings() authhttp.Settings {
	a := c.Auth
	p := a.ProviderSettings
	clients := map[string]authhttp.OAuthClient{}
	for name, cl := range p.Clients {
		if cl != nil {
			clients[name] = authhttp.OAuthClient{ID: cl.ID, Secret: string(cl.Secret)}
		}
	}
	devPort := a.DevPort
	// A server on an ephemeral port (tests) gets an ephemeral dev provider too, so parallel
	// servers never fight over 8084.
	if _, port, err := net.SplitHostPort(c.Addr); err == nil && port == "0" {
		devPort = 0
	}
	return authhttp.Settings{
		Secret: string(a.Secret), URL: a.URL, Issuer: a.Issuer, TokenDuration: a.TokenDuration, CookieDuration: a.CookieDuration,
		CookieDomain: a.CookieDomain, AllowedHosts: splitList(a.AllowedHosts), AvatarStore: string(a.AvatarStore),
		AvatarResize: a.AvatarResize, DevPort: devPort, AdminPasswd: string(a.AdminPasswd), Builtins: splitList(string(a.Providers)),
		Audiences: splitList(a.Audiences),
		SMTP: authhttp.SMTP{Host: a.SMTPHost, Port: a.SMTPPort, User: a.SMTPUser, Password: string(a.SMTPPassword),
			From: a.SMTPFrom, StartTLS: a.SMTPStartTLS},
		ConfirmPerRecipient: a.ConfirmPerRecipient, ConfirmPerClient: a.ConfirmPerClient, ConfirmWindow: a.ConfirmWindow,
		Providers: authhttp.Providers{Clients: clients, MicrosoftTenant: p.MicrosoftTenant,
			AppleClientID: p.AppleClientID, AppleTeamID: p.AppleTeamID, AppleKeyID: p.AppleKeyID, AppleKeyFile: p.AppleKeyFile,
			AppleKey: string(p.AppleKey), AppleResponseMode: p.AppleResponseMode,
			TelegramToken: string(p.TelegramToken), TelegramAPIURL: p.TelegramAPIURL, Custom: string(p.Custom), AllowPrivate: p.AllowPrivate},
	}
}

// ProvidersConfig enables login providers one by one, beside AUTH_PROVIDERS' name:cid:csecret
// list (authhttp.Providers says what each does). Every field is optional.
type ProvidersConfig struct {
	// Clients of the built-in OAuth providers, from AUTH_<NAME>_CID and AUTH_<NAME>_CSECRET, e.g.
	// AUTH_GITHUB_CID (for twitter: the consumer key and secret).
	Clients map[string]*OAuthClient
	// MicrosoftTenant is AUTH_MICROSOFT_TENANT.
	MicrosoftTenant string
	// Apple is Sign in with Apple: AUTH_APPLE_CLIENT_ID, AUTH_APPLE_TEAM_ID, AUTH_APPLE_KEY_ID,
	// AUTH_APPLE_KEY_FILE (the .p8 file) or AUTH_APPLE_KEY (its PEM text), AUTH_APPLE_RESPONSE_MODE.
	AppleClientID, AppleTeamID, AppleKeyID, AppleKeyFile, AppleResponseMode string
	AppleKey                                                                Secret
	// TelegramToken is AUTH_TELEGRAM_TOKEN, TelegramAPIURL AUTH_TELEGRAM_API_URL.
	TelegramToken  Secret
	TelegramAPIURL string
	// Custom is AUTH_CUSTOM_PROVIDERS, a JSON array of custom OAuth 2.0 providers.
	Custom Secret
	// AllowPrivate is AUTH_PROVIDERS_ALLOW_PRIVATE.
	AllowPrivate bool
}

// OAuthClient is a client id and secret.
type OAuthClient struct {
	ID     string
	Secret Secret
}

// LogValue masks the secret when the config is logged.
func (c *OAuthClient) LogValue() slog.Value {
	if c == nil || c.ID == "" {
		return slog.StringValue("")
	}
	return slog.StringValue(c.ID + ":" + c.Secret.String())
}

// splitList is a comma-separated setting's items, trimmed, without empty ones.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
