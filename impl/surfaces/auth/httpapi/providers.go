package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/pgshared"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Providers enable login providers one by one, beside Settings.Builtins' name:cid:csecret list.
// Every field is optional; a provider is on when its credentials are set.
type Providers struct {
	// Clients of the built-in OAuth providers of OAuthBuiltins, by name (AUTH_<NAME>_CID and
	// AUTH_<NAME>_CSECRET; for twitter: the consumer key and secret).
	// A nil client is an unset one.
	Clients map[string]*OAuthClient
	// MicrosoftTenant is common (default), organizations, consumers or a tenant id.
	MicrosoftTenant string
	// Apple is Sign in with Apple: the services id, team id, key id, and the .p8 private key as a
	// file (AppleKeyFile) or its PEM text (AppleKey); AppleResponseMode is form_post or query.
	AppleClientID, AppleTeamID, AppleKeyID, AppleKeyFile, AppleResponseMode string
	AppleKey                                                                kit.Secret
	// TelegramToken is the bot token; TelegramAPIURL replaces https://api.telegram.org (a local
	// Bot API server, tests).
	TelegramToken  kit.Secret
	TelegramAPIURL string
	// Custom is a JSON array of custom OAuth 2.0 providers (see customJSON).
	Custom kit.Secret
	// AllowPrivate: the providers' server-to-server calls may reach private and loopback
	// addresses (an identity provider or a local Bot API server inside the network). Off, the
	// guarded client of package outbound refuses them, so a provider URL cannot be turned against
	// the server's own network.
	AllowPrivate bool
}

// httpClient is the providers' outbound client: the guarded one, with the address guard off only
// when AllowPrivate says so.
func (c Providers) httpClient() *http.Client {
	if !c.AllowPrivate {
		return nil // each provider package's guarded default
	}
	return outbound.New(outbound.Options{AllowPrivate: true})
}

// telegramClient is httpClient for the Bot API, whose long polls outlast the default timeout.
func (c Providers) telegramClient() *http.Client {
	if !c.AllowPrivate {
		return nil // telegram's guarded default, with its long-poll timeout
	}
	return outbound.New(outbound.Options{AllowPrivate: true, Timeout: telegram.ClientTimeout})
}

// OAuthClient is a client id and secret.
type OAuthClient struct {
	ID     string
	Secret kit.Secret
}

// OAuthBuiltins are the built-ins configured with a client id and secret alone (Providers.Clients).
var OAuthBuiltins = []string{provider.GitHubName, provider.GoogleName, provider.FacebookName, provider.MicrosoftName,
	provider.YandexName, provider.BattleNetName, provider.PatreonName, provider.TwitterName}

// customJSON is one element of AUTH_CUSTOM_PROVIDERS, e.g.
//
//	[{"name":"corp","cid":"id","csecret":"secret","auth_url":"https://sso.example.com/authorize",
//	  "token_url":"https://sso.example.com/token","info_url":"https://sso.example.com/userinfo",
//	  "scopes":["profile"],"pkce":true,"id_field":"sub","name_field":"name","picture_field":"picture"}]
//
// The user is read from the info_url JSON: id_field (default "id"), name_field (default "name")
// and picture_field (default "picture").
type customJSON struct {
	Name         string   `json:"name"`
	Cid          string   `json:"cid"`
	Csecret      string   `json:"csecret"`
	AuthURL      string   `json:"auth_url"`
	TokenURL     string   `json:"token_url"`
	InfoURL      string   `json:"info_url"`
	Scopes       []string `json:"scopes"`
	PKCE         bool     `json:"pkce"`
	IDField      string   `json:"id_field"`
	NameField    string   `json:"name_field"`
	PictureField string   `json:"picture_field"`
}

// AddProviders registers on svc every provider whose settings pc holds; half or broken settings
// are an error naming the setting (never its secret), so a provider is never silently left out.
// The Telegram poller stops with svc.Close; shared (nil: in memory) holds its pending logins and
// elects the one replica that polls.
func AddProviders(ctx context.Context, svc *auth.Service, pc Providers, shared *pgshared.State) error {
	for _, name := range OAuthBuiltins {
		cl := pc.Clients[name]
		if cl == nil || cl.ID == "" && cl.Secret == "" {
			continue
		}
		up := strings.ToUpper(name)
		if cl.ID == "" || cl.Secret == "" {
			return fmt.Errorf("AUTH_%s_CID and AUTH_%s_CSECRET must be set together", up, up)
		}
		p := svc.Params(cl.ID, string(cl.Secret))
		var err error
		if name == provider.MicrosoftName {
			err = svc.AddCustomHandler(provider.NewMicrosoft(p, pc.MicrosoftTenant, provider.Endpoints{}))
		} else {
			err = svc.AddProvider(name, cl.ID, string(cl.Secret))
		}
		if err != nil {
			return fmt.Errorf("AUTH_%s_CID: %w", up, err)
		}
	}
	// Any Apple setting but the response mode (which has a default) turns Apple on, so a half
	// configuration fails the start instead of silently leaving the provider out.
	if pc.AppleClientID != "" || pc.AppleTeamID != "" || pc.AppleKeyID != "" || pc.AppleKeyFile != "" || pc.AppleKey != "" {
		var loader appleid.KeyLoader
		switch {
		case pc.AppleKey != "":
			loader = appleid.LoadFromBytes(string(pc.AppleKey))
		case pc.AppleKeyFile != "":
			loader = appleid.LoadFromFile(pc.AppleKeyFile)
		default:
			return errors.New("AUTH_APPLE_CLIENT_ID needs AUTH_APPLE_KEY_FILE or AUTH_APPLE_KEY")
		}
		h, err := provider.NewApple(svc.Params("", ""), provider.AppleConfig{ClientID: pc.AppleClientID,
			TeamID: pc.AppleTeamID, KeyID: pc.AppleKeyID, ResponseMode: pc.AppleResponseMode, PrivateKey: loader})
		if err != nil {
			return fmt.Errorf("AUTH_APPLE_*: %w", err)
		}
		if err := svc.AddCustomHandler(h); err != nil {
			return err
		}
	}
	if pc.TelegramToken != "" {
		gctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		logins, leader, offsets := shared.Telegram(string(pc.TelegramToken))
		h, err := provider.NewTelegram(gctx, svc.Params("", ""), provider.TelegramConfig{
			Telegram: telegram.NewAPI(string(pc.TelegramToken), pc.TelegramAPIURL, pc.telegramClient()),
			Logins:   logins, Leader: leader, Offsets: offsets})
		if err != nil {
			return fmt.Errorf("AUTH_TELEGRAM_TOKEN: %w", err)
		}
		if err := svc.AddCustomHandler(h); err != nil {
			_ = h.Close()
			return err
		}
	}
	if pc.Custom != "" {
		var list []customJSON
		d := json.NewDecoder(strings.NewReader(string(pc.Custom)))
		// A misspelt key ("scope", "PKCE") would otherwise be dropped silently and the provider
		// would run without what the operator asked for.
		d.DisallowUnknownFields()
		if err := d.Decode(&list); err != nil {
			// The JSON holds secrets: never echo its text; an unknown key's name is safe to show.
			if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				return fmt.Errorf("AUTH_CUSTOM_PROVIDERS: unknown key %s", field)
			}
			return errors.New("AUTH_CUSTOM_PROVIDERS is not a JSON array of providers")
		}
		for _, c := range list {
			h, err := provider.NewCustomOAuth2(svc.Params("", ""), provider.CustomOAuth2{
				Name: c.Name, Cid: c.Cid, Csecret: c.Csecret, AuthURL: c.AuthURL, TokenURL: c.TokenURL,
				InfoURL: c.InfoURL, Scopes: c.Scopes, PKCE: c.PKCE, MapUserFn: fieldMapper(c)})
			if err != nil {
				return fmt.Errorf("AUTH_CUSTOM_PROVIDERS: %w", err)
			}
			if err := svc.AddCustomHandler(h); err != nil {
				return fmt.Errorf("AUTH_CUSTOM_PROVIDERS: %w", err)
			}
		}
	}
	return nil
}

func fieldMapper(c customJSON) func(provider.UserData, []byte) token.User {
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	id, name, pic := def(c.IDField, "id"), def(c.NameField, "name"), def(c.PictureField, "picture")
	return func(d provider.UserData, _ []byte) token.User {
		return token.User{ID: d.Value(id), Name: d.Value(name), Picture: d.Value(pic)}
	}
}
