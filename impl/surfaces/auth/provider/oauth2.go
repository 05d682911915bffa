package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// OAuth2Config describes one OAuth 2.0 provider for the generic machinery.
type OAuth2Config struct {
	// Name of the provider (path segment, user-id prefix).
	Name string
	// Endpoint holds the authorization and token URLs.
	Endpoint oauth2.Endpoint
	// Scopes are the minimal scopes needed to read the user info.
	Scopes []string
	// InfoURL returns the logged-in user as JSON, called with the access token as a Bearer header.
	InfoURL string
	// MapUser turns the user info into a user. Its ID must be the provider's raw user id; Finish
	// derives the user id from it under Name (Params.UserIDFunc), unless KeepID is set.
	MapUser func(data UserData, body []byte) token.User
	// KeepID makes MapUser's ID the user's id as it is (CustomOAuth2.KeepID).
	KeepID bool
	// PKCE sends an S256 code challenge and the verifier on exchange (RFC 7636).
	PKCE bool
	// AuthCodeOptions are extra parameters of the authorization URL (e.g. prompt, response_mode).
	AuthCodeOptions []oauth2.AuthCodeOption
	// UserInfo, when set, replaces the InfoURL call (e.g. providers that put the user in an id_token
	// or need extra headers). It returns the data handed to MapUser.
	UserInfo func(ctx context.Context, client *http.Client, tok *oauth2.Token) (UserData, []byte, error)
}

// OAuth2Handler is a Provider speaking the OAuth 2.0 authorization-code flow.
type OAuth2Handler struct {
	Params
	OAuth2Config
	conf oauth2.Config
}

// NewOAuth2Handler builds the handler; the redirect URI is p.CallbackURL(c.Name).
func NewOAuth2Handler(p Params, c OAuth2Config) *OAuth2Handler {
	return &OAuth2Handler{Params: p, OAuth2Config: c, conf: oauth2.Config{
		ClientID: p.Cid, ClientSecret: p.Csecret, Endpoint: c.Endpoint, Scopes: c.Scopes,
		RedirectURL: p.CallbackURL(c.Name),
	}}
}

// Name returns the provider name.
func (h *OAuth2Handler) Name() string { return h.OAuth2Config.Name }

// OAuth2 returns the oauth2 configuration (client, endpoint, redirect URL) the handler uses.
func (h *OAuth2Handler) OAuth2() oauth2.Config { return h.conf }

// LoginHandler starts a login: query `site` (the aud), `from` (where to go after login; kept only
// when allowed) and `session`. It stores state, PKCE verifier and target in the signed handshake
// cookie and redirects (302) to the provider.
func (h *OAuth2Handler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aud := q.Get("site")
	if !h.JwtService.AllowedAudience(aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	from := q.Get("from")
	if safe := h.SafeFrom(from); safe != from {
		h.log().WarnContext(r.Context(), "login: ignoring a disallowed from", "provider", h.Name(), "from", from)
		from = ""
	}
	hs := token.Handshake{State: token.NewID(), From: from, Session: token.IsSessionRequest(r), Provider: h.Name()}
	opts := append([]oauth2.AuthCodeOption(nil), h.AuthCodeOptions...)
	if h.PKCE {
		hs.Verifier = oauth2.GenerateVerifier()
		opts = append(opts, oauth2.S256ChallengeOption(hs.Verifier))
	}
	if err := h.JwtService.SetHandshake(w, aud, hs); err != nil {
		web.Internal(w, r, fmt.Errorf("%s login: handshake: %w", h.Name(), err))
		return
	}
	http.Redirect(w, r, h.conf.AuthCodeURL(hs.State, opts...), http.StatusFound)
}

// AuthHandler is the callback: it checks the state against the handshake cookie (which it then
// clears, so a state works once), exchanges the code, reads the user and finishes the login.
// Each failure is a JSON refusal and sets no session.
func (h *OAuth2Handler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	hc, code, ok := h.callback(w, r, h.Name())
	if !ok {
		return
	}
	ctx := context.WithValue(r.Context(), oauth2.HTTPClient, h.Client())
	var opts []oauth2.AuthCodeOption
	if h.PKCE {
		opts = append(opts, oauth2.VerifierOption(hc.Handshake.Verifier))
	}
	tok, err := h.conf.Exchange(ctx, code, opts...)
	if err != nil {
		if h.guardRefused(w, r, CodeExchangeFailed, h.conf.Endpoint.TokenURL, err) {
			return
		}
		h.log().WarnContext(r.Context(), "login: exchange", "provider", h.Name(), "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeExchangeFailed, "the provider did not accept the authorization code")
		return
	}
	data, body, err := h.userInfo(ctx, tok)
	if err != nil {
		if h.guardRefused(w, r, CodeUserInfoFailed, h.InfoURL, err) {
			return
		}
		h.log().WarnContext(r.Context(), "login: user info", "provider", h.Name(), "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeUserInfoFailed, "could not read the user from the provider")
		return
	}
	u := h.MapUser(data, body)
	for field, attr := range h.UserAttributes {
		u.SetStrAttr(attr, data.Value(field))
	}
	if u.ID == "" {
		h.log().WarnContext(r.Context(), "login: user info without id", "provider", h.Name())
		WriteError(w, r, http.StatusBadGateway, CodeUserInfoFailed, "could not read the user from the provider")
		return
	}
	Finish(w, r, h.Params, h.Name(), LoginResult{User: u, Aud: hc.Aud(), Session: hc.Handshake.Session, From: hc.Handshake.From,
		Data: data, KeepID: h.KeepID})
}

// guardRefused answers a call to the provider that the outbound address guard refused (the
// endpoint resolved to a loopback, private or otherwise non-public address) for what it is, and
// reports whether err was that: 502 with code, saying the guard refused the address rather than
// blaming the provider, and an ERROR line on the service's logger (its default too: a logger
// left nil still passes errors to the standard log) naming the endpoint and what to set.
func (h *OAuth2Handler) guardRefused(w http.ResponseWriter, r *http.Request, code, endpoint string, err error) bool {
	if !errors.Is(err, outbound.ErrForbiddenAddress) {
		return false
	}
	h.log().ErrorContext(r.Context(), "login: the outbound guard refused the provider's address; to reach a provider on a "+
		"private or loopback address set Options.HTTPClient (outbound.New(outbound.Options{AllowPrivate: true})), or "+
		"AUTH_PROVIDERS_ALLOW_PRIVATE in the reference server", "provider", h.Name(), "endpoint", endpoint, "err", err,
		"request_id", web.RequestID(r.Context()))
	WriteError(w, r, http.StatusBadGateway, code,
		"the provider's address is not public and the outbound address guard refused to call it (see the server log)")
	return true
}

// maxInfoBody caps a user-info response; defends against a hostile or broken provider.
const maxInfoBody = 1 << 20

func (h *OAuth2Handler) userInfo(ctx context.Context, tok *oauth2.Token) (UserData, []byte, error) {
	client := h.Client()
	if h.UserInfo != nil {
		return h.UserInfo(ctx, client, tok)
	}
	return getUserInfo(ctx, client, h.InfoURL, tok.Type()+" "+tok.AccessToken)
}

// DecodeUserData decodes a JSON object keeping numbers exact.
func DecodeUserData(body []byte) (UserData, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var data UserData
	if err := d.Decode(&data); err != nil {
		return nil, fmt.Errorf("user info: %w", err)
	}
	return data, nil
}

// LogoutHandler clears the session cookies.
func (h *OAuth2Handler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	Logout(w, h.JwtService)
}
