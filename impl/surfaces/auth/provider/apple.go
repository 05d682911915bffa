package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// AppleConfig configures the device-vendor provider (Sign in with Apple).
type AppleConfig struct {
	// ClientID is the Services ID (required).
	ClientID string
	// TeamID is the developer account's team id (required).
	TeamID string
	// KeyID is the id of the private key (required).
	KeyID string
	// ResponseMode is how Apple returns the code: "form_post" (default; required when the name is
	// requested) or "query".
	ResponseMode string
	// PrivateKey loads the .p8 key that signs the client secret: appleid.LoadFromFile or
	// appleid.LoadFromBytes (required).
	PrivateKey appleid.KeyLoader
	// AuthURL, TokenURL, KeysURL and Issuer override Apple's (tests).
	AuthURL, TokenURL, KeysURL, Issuer string
}

// AppleHandler is the Sign in with Apple provider. The user's name comes only with the first
// authorization (the `user` form field); later logins know the user by the id_token's sub alone.
type AppleHandler struct {
	Params
	conf AppleConfig
	key  *ecdsa.PrivateKey
	keys *appleid.KeySet
}

// NewApple loads the private key now, so a bad key fails registration rather than the first login.
func NewApple(p Params, c AppleConfig) (*AppleHandler, error) {
	if c.ClientID == "" || c.TeamID == "" || c.KeyID == "" {
		return nil, errors.New("apple: ClientID, TeamID and KeyID are required")
	}
	key, err := appleid.Load(c.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("apple: %w", err)
	}
	switch c.ResponseMode {
	case "":
		c.ResponseMode = "form_post"
	case "form_post", "query":
	default:
		return nil, fmt.Errorf("apple: ResponseMode %q is not form_post or query", c.ResponseMode)
	}
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&c.AuthURL, appleid.AuthURL)
	def(&c.TokenURL, appleid.TokenURL)
	def(&c.KeysURL, appleid.KeysURL)
	def(&c.Issuer, appleid.Issuer)
	return &AppleHandler{Params: p, conf: c, key: key, keys: &appleid.KeySet{URL: c.KeysURL, Client: p.Client()}}, nil
}

// Name is "apple".
func (h *AppleHandler) Name() string { return AppleName }

// LoginHandler stores state and target in the handshake cookie and sends the user to Apple.
func (h *AppleHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aud := q.Get("site")
	if !h.JwtService.AllowedAudience(aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	hs := token.Handshake{State: token.NewID(), From: h.SafeFrom(q.Get("from")), Session: token.IsSessionRequest(r), Provider: AppleName}
	if err := h.JwtService.SetHandshake(w, aud, hs); err != nil {
		web.Internal(w, r, fmt.Errorf("%s login: handshake: %w", AppleName, err))
		return
	}
	v := url.Values{"response_type": {"code"}, "client_id": {h.conf.ClientID}, "redirect_uri": {h.CallbackURL(AppleName)},
		"state": {hs.State}, "response_mode": {h.conf.ResponseMode}}
	if h.conf.ResponseMode == "form_post" {
		v.Set("scope", "name") // Apple only sends the name, and only with form_post
	}
	http.Redirect(w, r, h.conf.AuthURL+"?"+v.Encode(), http.StatusFound)
}

// AuthHandler is the callback. Apple's form_post arrives as a cross-site POST, on which browsers
// do not send the SameSite=Lax handshake cookie; so the POST is bounced to a same-URL GET (303),
// a top-level navigation that does carry it, and the state check happens there.
func (h *AppleHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "malformed callback form")
			return
		}
		v := url.Values{}
		for _, k := range []string{"code", "state", "error"} {
			if s := r.PostForm.Get(k); s != "" {
				v.Set(k, s)
			}
		}
		// Of the first sign-up's `user` JSON only the name is carried over: the e-mail address in
		// it would otherwise end up in access logs and the browser history with the GET URL.
		if name := firstSignupName(r.PostForm.Get("user")); name != "" {
			v.Set("name", name)
		}
		http.Redirect(w, r, h.CallbackURL(AppleName)+"?"+v.Encode(), http.StatusSeeOther)
		return
	}
	hc, code, ok := h.callback(w, r, AppleName)
	if !ok {
		return
	}
	q := r.URL.Query()
	idToken, err := h.exchange(r.Context(), code)
	if err != nil {
		h.log().WarnContext(r.Context(), "login: exchange", "provider", AppleName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeExchangeFailed, "the provider did not accept the authorization code")
		return
	}
	claims, err := h.keys.Verify(r.Context(), idToken, h.conf.Issuer, h.conf.ClientID)
	if err != nil {
		h.log().WarnContext(r.Context(), "login: id token", "provider", AppleName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeUserInfoFailed, "could not read the user from the provider")
		return
	}
	u := token.User{ID: claims.Subject, Name: q.Get("name")}
	if u.Name == "" {
		// Later logins carry no name; a stable pseudonym from sub keeps the user recognisable.
		sum := sha1.Sum([]byte(claims.Subject))
		u.Name = "apple_" + hex.EncodeToString(sum[:4])
	}
	Finish(w, r, h.Params, AppleName, LoginResult{User: u, Aud: hc.Aud(), Session: hc.Handshake.Session, From: hc.Handshake.From})
}

// exchange trades the code for tokens with a freshly signed client secret and returns the id_token.
func (h *AppleHandler) exchange(ctx context.Context, code string) (string, error) {
	secret, err := appleid.ClientSecret(h.key, h.conf.TeamID, h.conf.ClientID, h.conf.KeyID, time.Now(), 5*time.Minute)
	if err != nil {
		return "", err
	}
	conf := oauth2.Config{ClientID: h.conf.ClientID, ClientSecret: secret, RedirectURL: h.CallbackURL(AppleName),
		Endpoint: oauth2.Endpoint{AuthURL: h.conf.AuthURL, TokenURL: h.conf.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.Client()), code)
	if err != nil {
		return "", err
	}
	idToken, _ := tok.Extra("id_token").(string)
	if idToken == "" {
		return "", errors.New("token response has no id_token")
	}
	return idToken, nil
}

// firstSignupName reads the name from Apple's first-authorization `user` JSON.
func firstSignupName(userJSON string) string {
	if userJSON == "" {
		return ""
	}
	var v struct {
		Name struct {
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
		} `json:"name"`
	}
	if json.Unmarshal([]byte(userJSON), &v) != nil {
		return ""
	}
	return strings.TrimSpace(v.Name.FirstName + " " + v.Name.LastName)
}

// LogoutHandler clears the session cookies.
func (h *AppleHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) { Logout(w, h.JwtService) }
