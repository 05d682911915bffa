package auth

import (
	"errors"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// The seed's provider registration shapes (auth-service.md, "Provider configuration"; go-pkgz/auth's
// API), beside the service's own: code written from the seed compiles against these. The messenger
// handler's shape is provider.TelegramHandler (a literal, Run, then AddCustomHandler); the local
// OAuth 2.0 server's is oauthserver.Options (URL, WithLoginPage, LoginPageHandler, Logger).

// Client is the seed's OAuth 2.0 client of a custom provider: its id Cid and secret Csecret.
type Client struct {
	Cid     string
	Csecret string
}

// AddCustomOAuth2Provider registers a custom OAuth 2.0 provider in the seed's shape: a name (not a
// built-in provider's; several clients of one third party go under different names), the client,
// and the endpoints, InfoURL, MapUserFn and Scopes of opt. It is AddCustomProvider with
// provider.CustomOAuth2{...}, which takes the same in one struct and can also turn on PKCE.
func (s *Service) AddCustomOAuth2Provider(name string, client Client, opt provider.CustomHandlerOpt) error {
	return s.AddCustomProvider(opt.CustomOAuth2(name, client.Cid, client.Csecret))
}

// AddAppleProvider registers the device-vendor provider (Sign in with Apple) in the seed's shape:
// the config (ClientID, TeamID and KeyID required; ResponseMode default form_post) and a loader of
// the private key (provider.LoadApplePrivateKeyFromFile, appleid.LoadFromBytes, or any
// LoadPrivateKey() ([]byte, error)). The key is loaded and parsed now: an error here, not at the
// first login. It is provider.NewApple with AppleConfig.PrivateKey set, then AddCustomHandler.
func (s *Service) AddAppleProvider(c provider.AppleConfig, loader provider.PrivateKeyLoaderInterface) error {
	if loader == nil {
		return errors.New("auth: apple: a private key loader is required")
	}
	c.PrivateKey = loader
	h, err := provider.NewApple(s.Params("", ""), c)
	if err != nil {
		return err
	}
	return s.AddCustomHandler(h)
}
