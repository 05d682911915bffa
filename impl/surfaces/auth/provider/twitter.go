package provider

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/oauth1"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TwitterEndpoints overrides the microblogging provider's URLs (tests); empty fields keep the real ones.
type TwitterEndpoints struct {
	RequestTokenURL, AuthorizeURL, AccessTokenURL, InfoURL string
}

// TwitterHandler is the microblogging provider: "Sign in with Twitter" over OAuth 1.0a, with the
// consumer key and secret given as Cid and Csecret.
type TwitterHandler struct {
	Params
	conf    oauth1.Config
	infoURL string
}

// NewTwitter builds the Twitter provider.
func NewTwitter(p Params, e TwitterEndpoints) *TwitterHandler {
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	return &TwitterHandler{Params: p, conf: oauth1.Config{
		ConsumerKey:     p.Cid,
		ConsumerSecret:  p.Csecret,
		RequestTokenURL: def(e.RequestTokenURL, "https://api.twitter.com/oauth/request_token"),
		// authenticate (not authorize) skips the consent screen for users who approved the app before.
		AuthorizeURL:   def(e.AuthorizeURL, "https://api.twitter.com/oauth/authenticate"),
		AccessTokenURL: def(e.AccessTokenURL, "https://api.twitter.com/oauth/access_token"),
		CallbackURL:    p.CallbackURL(TwitterName),
		HTTPClient:     p.Client(),
	}, infoURL: def(e.InfoURL, "https://api.twitter.com/1.1/account/verify_credentials.json")}
}

// Name is "twitter".
func (h *TwitterHandler) Name() string { return TwitterName }

// LoginHandler gets a request token and sends the user to Twitter. The request token is the state
// of the flow: the handshake cookie binds it to this browser, and its secret rides along in the
// signed cookie. That secret is only useful together with the consumer secret, which never leaves
// the server.
func (h *TwitterHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aud := q.Get("site")
	if !h.JwtService.AllowedAudience(aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	temp, err := h.conf.RequestToken(r.Context())
	if err != nil {
		h.log().WarnContext(r.Context(), "login: request token", "provider", TwitterName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeExchangeFailed, "the provider did not start the login")
		return
	}
	hs := token.Handshake{State: temp.Token, Verifier: temp.Secret, From: h.SafeFrom(q.Get("from")), Session: token.IsSessionRequest(r),
		Provider: TwitterName}
	if err := h.JwtService.SetHandshake(w, aud, hs); err != nil {
		web.Internal(w, r, fmt.Errorf("%s login: handshake: %w", TwitterName, err))
		return
	}
	http.Redirect(w, r, h.conf.AuthorizationURL(temp), http.StatusFound)
}

// AuthHandler is the callback: oauth_token must be the request token of this browser's handshake;
// a cancelled sign-in arrives as ?denied=. Every failure is a JSON refusal with no session.
func (h *TwitterHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	hc, err := h.JwtService.GetHandshake(r)
	h.JwtService.ResetHandshake(w)
	q := r.URL.Query()
	// A handshake started for another provider is refused (OAuth mix-up defence).
	if err != nil || hc.Handshake.State == "" || hc.Handshake.Provider != TwitterName {
		WriteError(w, r, http.StatusBadRequest, CodeBadState, "login state missing, expired or not matching; start the login again")
		return
	}
	if q.Get("denied") != "" {
		WriteError(w, r, http.StatusUnauthorized, CodeProviderError, "the provider refused the login")
		return
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("oauth_token")), []byte(hc.Handshake.State)) != 1 {
		WriteError(w, r, http.StatusBadRequest, CodeBadState, "login state missing, expired or not matching; start the login again")
		return
	}
	verifier := q.Get("oauth_verifier")
	if verifier == "" {
		WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "missing oauth_verifier")
		return
	}
	ctx := r.Context()
	acc, _, err := h.conf.AccessToken(ctx, oauth1.Credentials{Token: hc.Handshake.State, Secret: hc.Handshake.Verifier}, verifier)
	if err != nil {
		h.log().WarnContext(r.Context(), "login: access token", "provider", TwitterName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeExchangeFailed, "the provider did not accept the authorization")
		return
	}
	u, err := h.verifyCredentials(r, acc)
	if err != nil {
		h.log().WarnContext(r.Context(), "login: user info", "provider", TwitterName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeUserInfoFailed, "could not read the user from the provider")
		return
	}
	Finish(w, r, h.Params, TwitterName, LoginResult{User: u, Aud: hc.Aud(), Session: hc.Handshake.Session, From: hc.Handshake.From})
}

func (h *TwitterHandler) verifyCredentials(r *http.Request, acc oauth1.Credentials) (token.User, error) {
	resp, err := h.conf.Get(r.Context(), h.infoURL, acc)
	if err != nil {
		return token.User{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return token.User{}, fmt.Errorf("verify_credentials: status %d", resp.StatusCode)
	}
	var v struct {
		IDStr      string `json:"id_str"`
		Name       string `json:"name"`
		ScreenName string `json:"screen_name"`
		Image      string `json:"profile_image_url_https"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxInfoBody)).Decode(&v); err != nil {
		return token.User{}, fmt.Errorf("verify_credentials: %w", err)
	}
	if v.IDStr == "" {
		return token.User{}, fmt.Errorf("verify_credentials: no id")
	}
	name := v.Name
	if name == "" {
		name = v.ScreenName
	}
	return token.User{ID: v.IDStr, Name: name, Picture: v.Image}, nil
}

// LogoutHandler clears the session cookies.
func (h *TwitterHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	Logout(w, h.JwtService)
}
