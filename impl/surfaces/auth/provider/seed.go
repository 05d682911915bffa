package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// This file holds the provider registration shapes of the seed (auth-service.md, "Provider
// configuration"), which are go-pkgz/auth's, beside triad's own: code written from the seed's tables
// compiles against them. Each maps onto the triad form, which remains the fuller one (PKCE,
// AuthStyle, shared state for replicas, test endpoints).

// CustomHandlerOpt is the seed's custom OAuth 2.0 provider, less its name and client: Endpoint
// (AuthURL, TokenURL), InfoURL, MapUserFn and Scopes. Register it with the service's
// AddCustomOAuth2Provider(name, auth.Client{Cid, Csecret}, opt). CustomOAuth2 is the same provider
// in one struct, with PKCE.
type CustomHandlerOpt struct {
	// Endpoint holds the authorization and token URLs (and, optionally, the AuthStyle).
	Endpoint oauth2.Endpoint
	// InfoURL is the API method returning the logged-in user.
	InfoURL string
	// MapUserFn converts the InfoURL response into the user; nil reads "id", "name" and "picture".
	MapUserFn func(data UserData, body []byte) token.User
	// Scopes are the minimal scopes needed to read the user info.
	Scopes []string
	// KeepID takes MapUserFn's ID as the user's id, as go-pkgz/auth did (see CustomOAuth2.KeepID).
	KeepID bool
}

// CustomOAuth2 is o as the triad form, for the provider name with the client id cid and secret csecret.
func (o CustomHandlerOpt) CustomOAuth2(name, cid, csecret string) CustomOAuth2 {
	return CustomOAuth2{Name: name, Cid: cid, Csecret: csecret,
		AuthURL: o.Endpoint.AuthURL, TokenURL: o.Endpoint.TokenURL, AuthStyle: o.Endpoint.AuthStyle,
		InfoURL: o.InfoURL, MapUserFn: o.MapUserFn, Scopes: o.Scopes, KeepID: o.KeepID}
}

// PrivateKeyLoaderInterface is the seed's private-key loader of the device-vendor (Apple) provider,
// go-pkgz/auth's name for appleid.KeyLoader: LoadPrivateKey() ([]byte, error). The service's
// AddAppleProvider(cfg, loader) calls it once, at registration.
type PrivateKeyLoaderInterface = appleid.KeyLoader

// LoadApplePrivateKeyFromFile is the loader of the .p8 key file at path.
func LoadApplePrivateKeyFromFile(path string) PrivateKeyLoaderInterface {
	return appleid.LoadFromFile(path)
}

// NewTelegramAPI is the seed's messenger API, built from the bot's secret token and an HTTP client
// (nil: one with a timeout longer than the long poll), talking to Telegram's Bot API.
func NewTelegramAPI(token string, client *http.Client) *telegram.API {
	return telegram.NewAPI(token, "", client)
}

// Run starts a TelegramHandler built the seed's way, as a literal of its exported fields: it asks
// the messenger API for the bot's name (which proves the token), then polls for updates until ctx
// ends, and returns nil then. Run it in a goroutine and register the handler with the service's
// AddCustomHandler; until Run has the bot's name the provider's login answers 503
// provider_starting. Pending logins and the poller's offset live in this process's memory (one
// replica; NewTelegram with TelegramConfig.Logins, Leader and Offsets shares them). A handler made by NewTelegram already polls, and
// Run refuses it.
func (h *TelegramHandler) Run(ctx context.Context) error {
	if h.ready.Load() || h.stop != nil {
		return errors.New("telegram: the handler is running already")
	}
	if h.Telegram == nil || h.TokenService == nil {
		return errors.New("telegram: Telegram (the messenger API) and TokenService are required")
	}
	me, err := h.Telegram.GetMe(ctx)
	if err != nil {
		return fmt.Errorf("telegram: getMe: %w", err)
	}
	if me.Username == "" {
		return errors.New("telegram: the bot has no username")
	}
	// Everything the handlers read is written before ready is set, and never after.
	if h.SuccessMsg == "" {
		h.SuccessMsg = DefaultTelegramSuccessMsg
	}
	if h.ErrorMsg == "" {
		h.ErrorMsg = DefaultTelegramErrorMsg
	}
	if isNil(h.AvatarSaver) {
		h.AvatarSaver = nil // AvatarProxy() of a service without a store is a nil *avatar.Proxy
	}
	log := logger.Of(h.L)
	h.Params = Params{JwtService: h.TokenService, AvatarSaver: h.AvatarSaver, L: log}
	h.conf = TelegramConfig{ProviderName: h.Name(), SuccessMsg: h.SuccessMsg, ErrorMsg: h.ErrorMsg, Telegram: h.Telegram,
		RequestTTL: DefaultTelegramRequestTTL, Logins: NewMemoryTelegramLogins(), Leader: AlwaysLeader{}}
	h.botName = me.Username
	h.ready.Store(true)
	(&telegram.Poller{API: h.Telegram, Handle: h.handleUpdate, Log: log}).Run(ctx)
	return nil
}

// isNil reports whether v is nil or holds a nil pointer, map, func or the like.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Slice, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
