package provider

import (
	"errors"
	"fmt"
	"regexp"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// CustomOAuth2 configures an OAuth 2.0 provider the service has no built-in for: any third party,
// or the local server of package oauthserver. Several clients of one third party can be registered
// under different names.
type CustomOAuth2 struct {
	// Name is the provider's path segment and user-id prefix; it may not be a built-in name.
	Name string
	// Cid and Csecret are the client id and secret registered at the third party.
	Cid, Csecret string
	// AuthURL and TokenURL are the authorization and token endpoints.
	AuthURL, TokenURL string
	// AuthStyle says how the client authenticates at the token endpoint; zero auto-detects.
	AuthStyle oauth2.AuthStyle
	// InfoURL is the API method returning the logged-in user (called with a Bearer token).
	InfoURL string
	// MapUserFn converts the InfoURL response into a user whose ID is the provider's raw id (the
	// service hashes it). Nil reads the "id", "name" and "picture" fields.
	MapUserFn func(data UserData, body []byte) token.User
	// Scopes are the minimal scopes needed to read the user info.
	Scopes []string
	// PKCE sends an S256 code challenge; turn it on when the provider supports RFC 7636.
	PKCE bool
}

// Errors of NewCustomOAuth2.
var (
	ErrBuiltinName = errors.New("provider: name belongs to a built-in provider")
	ErrCustomName  = errors.New("provider: custom provider name must be 1-32 of a-z, 0-9, '_' or '-'")
)

var customName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// NewCustomOAuth2 builds a custom OAuth 2.0 provider on the generic machinery. p supplies the
// service parts (token service, URL, avatar saver); c's Cid and Csecret replace p's.
func NewCustomOAuth2(p Params, c CustomOAuth2) (*OAuth2Handler, error) {
	if !customName.MatchString(c.Name) {
		return nil, fmt.Errorf("%w: %q", ErrCustomName, c.Name)
	}
	if IsBuiltinName(c.Name) {
		return nil, fmt.Errorf("%w: %q", ErrBuiltinName, c.Name)
	}
	if c.Cid == "" || c.Csecret == "" || c.AuthURL == "" || c.TokenURL == "" || c.InfoURL == "" {
		return nil, fmt.Errorf("provider %s: Cid, Csecret, AuthURL, TokenURL and InfoURL are required", c.Name)
	}
	mapUser := c.MapUserFn
	if mapUser == nil {
		mapUser = func(d UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: d.Value("name"), Picture: d.Value("picture")}
		}
	}
	p.Cid, p.Csecret = c.Cid, c.Csecret
	return NewOAuth2Handler(p, OAuth2Config{
		Name:     c.Name,
		Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: c.AuthStyle},
		Scopes:   c.Scopes,
		InfoURL:  c.InfoURL,
		MapUser:  mapUser,
		PKCE:     c.PKCE,
	}), nil
}
