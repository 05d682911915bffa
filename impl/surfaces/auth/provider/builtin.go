package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Names of the built-in OAuth providers. Each is registered in init, so auth.Service.AddProvider
// accepts it with a client id and secret (for Twitter: consumer key and secret).
const (
	GitHubName    = "github"
	GoogleName    = "google"
	FacebookName  = "facebook"
	MicrosoftName = "microsoft"
	YandexName    = "yandex"
	BattleNetName = "battlenet"
	PatreonName   = "patreon"
	TwitterName   = "twitter"
	AppleName     = "apple"
	TelegramName  = "telegram"
)

// builtinNames are the names custom OAuth2 providers may not take, so a user id prefix always
// tells which provider vouched for the user. Apple and Telegram need more than a client id and
// secret and are built with NewApple and NewTelegram; their names are reserved too.
var builtinNames = []string{GitHubName, GoogleName, FacebookName, MicrosoftName, YandexName, BattleNetName,
	PatreonName, TwitterName, AppleName, TelegramName, DevName}

// IsBuiltinName reports whether name belongs to a built-in provider.
func IsBuiltinName(name string) bool {
	for _, n := range builtinNames {
		if n == name {
			return true
		}
	}
	return false
}

// Endpoints overrides a built-in provider's URLs, for tests or self-hosted variants; empty fields
// keep the provider's real endpoints.
type Endpoints struct {
	AuthURL, TokenURL, InfoURL string
}

func (e Endpoints) apply(c *OAuth2Config) {
	if e.AuthURL != "" {
		c.Endpoint.AuthURL = e.AuthURL
	}
	if e.TokenURL != "" {
		c.Endpoint.TokenURL = e.TokenURL
	}
	if e.InfoURL != "" {
		c.InfoURL = e.InfoURL
	}
}

func init() {
	reg := func(name string, mk func(Params, Endpoints) *OAuth2Handler) {
		RegisterBuiltin(name, func(p Params) (Provider, error) {
			if p.Cid == "" || p.Csecret == "" {
				return nil, fmt.Errorf("%s: client id and secret are required", name)
			}
			return mk(p, Endpoints{}), nil
		})
	}
	reg(GitHubName, NewGitHub)
	reg(GoogleName, NewGoogle)
	reg(FacebookName, NewFacebook)
	reg(MicrosoftName, func(p Params, e Endpoints) *OAuth2Handler { return NewMicrosoft(p, "", e) })
	reg(YandexName, NewYandex)
	reg(BattleNetName, NewBattleNet)
	reg(PatreonName, NewPatreon)
	RegisterBuiltin(TwitterName, func(p Params) (Provider, error) {
		if p.Cid == "" || p.Csecret == "" {
			return nil, fmt.Errorf("%s: consumer key and secret are required", TwitterName)
		}
		return NewTwitter(p, TwitterEndpoints{}), nil
	})
	// Apple and Telegram are built-ins too, but a client id and secret cannot configure them; by
	// name they answer how to add them instead of "unknown provider".
	RegisterBuiltin(AppleName, func(Params) (Provider, error) {
		return nil, errors.New("apple: needs ClientID, TeamID, KeyID and the private key: build it with provider.NewApple and add it with AddCustomHandler")
	})
	RegisterBuiltin(TelegramName, func(Params) (Provider, error) {
		return nil, errors.New("telegram: needs a bot token: build it with provider.NewTelegram and add it with AddCustomHandler")
	})
}

func builtinOAuth2(p Params, c OAuth2Config, e Endpoints) *OAuth2Handler {
	e.apply(&c)
	return NewOAuth2Handler(p, c)
}

// NewGitHub is the code-hosting provider. No scope is requested: the public profile needs none.
func NewGitHub(p Params, e Endpoints) *OAuth2Handler {
	return builtinOAuth2(p, OAuth2Config{
		Name: GitHubName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://github.com/login/oauth/authorize",
			TokenURL: "https://github.com/login/oauth/access_token", AuthStyle: oauth2.AuthStyleInParams},
		InfoURL: "https://api.github.com/user",
		PKCE:    true,
		MapUser: func(d UserData, _ []byte) token.User {
			name := d.Value("name")
			if name == "" {
				name = d.Value("login")
			}
			return token.User{ID: d.Value("id"), Name: name, Picture: d.Value("avatar_url")}
		},
	}, e)
}

// NewGoogle is the search-engine provider (OpenID Connect userinfo, scopes openid and profile).
func NewGoogle(p Params, e Endpoints) *OAuth2Handler {
	return builtinOAuth2(p, OAuth2Config{
		Name: GoogleName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://accounts.google.com/o/oauth2/v2/auth",
			TokenURL: "https://oauth2.googleapis.com/token", AuthStyle: oauth2.AuthStyleInParams},
		Scopes:  []string{"openid", "profile"},
		InfoURL: "https://openidconnect.googleapis.com/v1/userinfo",
		PKCE:    true,
		MapUser: func(d UserData, _ []byte) token.User {
			return token.User{ID: d.Value("sub"), Name: d.Value("name"), Picture: d.Value("picture")}
		},
	}, e)
}

// NewFacebook is the social-network provider (Graph API /me with id, name and picture).
func NewFacebook(p Params, e Endpoints) *OAuth2Handler {
	return builtinOAuth2(p, OAuth2Config{
		Name: FacebookName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://www.facebook.com/v19.0/dialog/oauth",
			TokenURL: "https://graph.facebook.com/v19.0/oauth/access_token", AuthStyle: oauth2.AuthStyleInParams},
		Scopes:  []string{"public_profile"},
		InfoURL: "https://graph.facebook.com/me?fields=id,name,picture",
		PKCE:    true,
		MapUser: func(d UserData, _ []byte) token.User {
			u := token.User{ID: d.Value("id"), Name: d.Value("name")}
			if pic, ok := jsonPath(d, "picture", "data").(map[string]any); ok {
				if silhouette, _ := pic["is_silhouette"].(bool); !silhouette {
					u.Picture, _ = pic["url"].(string)
				}
			}
			return u
		},
	}, e)
}

// NewMicrosoft is the software-vendor provider (Microsoft identity platform v2, Graph /me). tenant
// is "common" (work, school and personal accounts) when empty, or "organizations", "consumers", or
// a directory id. Graph serves the photo only as bytes behind the token, so the user gets an
// identicon.
func NewMicrosoft(p Params, tenant string, e Endpoints) *OAuth2Handler {
	if tenant == "" {
		tenant = "common"
	}
	base := "https://login.microsoftonline.com/" + tenant + "/oauth2/v2.0"
	return builtinOAuth2(p, OAuth2Config{
		Name:     MicrosoftName,
		Endpoint: oauth2.Endpoint{AuthURL: base + "/authorize", TokenURL: base + "/token", AuthStyle: oauth2.AuthStyleInParams},
		Scopes:   []string{"User.Read"},
		InfoURL:  "https://graph.microsoft.com/v1.0/me",
		PKCE:     true,
		MapUser: func(d UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: d.Value("displayName")}
		},
	}, e)
}

// NewYandex is the regional web-portal provider (login.yandex.ru/info, which wants the token as
// "Authorization: OAuth <token>").
func NewYandex(p Params, e Endpoints) *OAuth2Handler {
	c := OAuth2Config{
		Name: YandexName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://oauth.yandex.ru/authorize",
			TokenURL: "https://oauth.yandex.ru/token", AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:  []string{"login:info", "login:avatar"},
		InfoURL: "https://login.yandex.ru/info?format=json",
		PKCE:    true,
		MapUser: func(d UserData, _ []byte) token.User {
			u := token.User{ID: d.Value("id"), Name: d.Value("display_name")}
			if u.Name == "" {
				u.Name = d.Value("real_name")
			}
			if u.Name == "" {
				u.Name = d.Value("login")
			}
			if av := d.Value("default_avatar_id"); av != "" && d.Value("is_avatar_empty") != "true" {
				u.Picture = "https://avatars.yandex.net/get-yapic/" + av + "/islands-200"
			}
			return u
		},
	}
	e.apply(&c)
	infoURL := c.InfoURL
	c.UserInfo = func(ctx context.Context, client *http.Client, tok *oauth2.Token) (UserData, []byte, error) {
		return getUserInfo(ctx, client, infoURL, "OAuth "+tok.AccessToken)
	}
	return NewOAuth2Handler(p, c)
}

// NewBattleNet is the game-network provider (OpenID userinfo with the battletag).
func NewBattleNet(p Params, e Endpoints) *OAuth2Handler {
	return builtinOAuth2(p, OAuth2Config{
		Name: BattleNetName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://oauth.battle.net/authorize",
			TokenURL: "https://oauth.battle.net/token", AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:  []string{"openid"},
		InfoURL: "https://oauth.battle.net/userinfo",
		MapUser: func(d UserData, _ []byte) token.User {
			id := d.Value("id")
			if id == "" {
				id = d.Value("sub")
			}
			return token.User{ID: id, Name: d.Value("battletag")}
		},
	}, e)
}

// NewPatreon is the membership-platform provider (identity API v2, a JSON:API document).
func NewPatreon(p Params, e Endpoints) *OAuth2Handler {
	return builtinOAuth2(p, OAuth2Config{
		Name: PatreonName,
		Endpoint: oauth2.Endpoint{AuthURL: "https://www.patreon.com/oauth2/authorize",
			TokenURL: "https://www.patreon.com/api/oauth2/token", AuthStyle: oauth2.AuthStyleInParams},
		Scopes:  []string{"identity"},
		InfoURL: "https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=full_name,image_url",
		MapUser: func(d UserData, _ []byte) token.User {
			data, _ := d["data"].(map[string]any)
			u := token.User{ID: UserData(data).Value("id")}
			if attrs, ok := data["attributes"].(map[string]any); ok {
				u.Name = UserData(attrs).Value("full_name")
				u.Picture = UserData(attrs).Value("image_url")
			}
			return u
		},
	}, e)
}

// jsonPath walks nested JSON objects; nil when a step is missing.
func jsonPath(d map[string]any, keys ...string) any {
	var cur any = d
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// getUserInfo GETs a user-info URL with the given Authorization header and decodes the JSON.
func getUserInfo(ctx context.Context, client *http.Client, infoURL, authorization string) (UserData, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, infoURL, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", authorization)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInfoBody))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("user info: status %d", resp.StatusCode)
	}
	data, err := DecodeUserData(body)
	return data, body, err
}
