// Package provider holds what every login provider of the auth service shares: the Provider
// interface, the Params a provider is built from, the generic OAuth 2.0 machinery (state cookie,
// PKCE, code exchange, user info, 303 redirect to a validated target), and the providers that need
// no third party: dev (a fake OAuth 2.0 server), direct (a caller's credential checker) and
// verified (a confirmation token sent through a Sender).
package provider

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Provider is a login method mounted under /auth/<Name()>/.
type Provider interface {
	// Name is the path segment and the prefix of user ids; unique within a service.
	Name() string
	// LoginHandler serves /auth/<name>/login.
	LoginHandler(w http.ResponseWriter, r *http.Request)
	// AuthHandler serves /auth/<name>/callback.
	AuthHandler(w http.ResponseWriter, r *http.Request)
	// LogoutHandler serves /auth/<name>/logout.
	LogoutHandler(w http.ResponseWriter, r *http.Request)
}

// TokenService is what providers need of the token service; *token.Service implements it.
type TokenService interface {
	// Set signs claims for a completed login and sets the JWT and XSRF cookies.
	Set(w http.ResponseWriter, claims token.Claims) (token.Claims, error)
	// Get reads the token of a request.
	Get(r *http.Request) (token.Claims, string, error)
	// Reset clears the JWT and XSRF cookies.
	Reset(w http.ResponseWriter)
	// Token signs claims as they are; Parse verifies a token string.
	Token(claims token.Claims) (string, error)
	Parse(tokenString string) (token.Claims, error)
	// SetHandshake, GetHandshake and ResetHandshake keep a login in progress in a signed, short-lived cookie.
	SetHandshake(w http.ResponseWriter, aud string, h token.Handshake) error
	GetHandshake(r *http.Request) (token.Claims, error)
	ResetHandshake(w http.ResponseWriter)
	// HandshakeToken and ParseHandshake sign and verify a handshake carried elsewhere than a cookie
	// (a confirmation link).
	HandshakeToken(aud string, h token.Handshake) (string, error)
	ParseHandshake(tokenString string) (token.Claims, error)
	// AllowedAudience reports whether a site/aud may get a token.
	AllowedAudience(aud string) bool
}

var _ TokenService = (*token.Service)(nil)

// AvatarSaver stores a user's picture and returns the proxied URL; an empty pictureURL asks for an
// identicon. The avatar proxy implements it.
type AvatarSaver interface {
	Put(ctx context.Context, userID, pictureURL string) (string, error)
}

// Params is what the service gives each provider it builds.
type Params struct {
	// URL is the public base URL of the site (scheme://host[:port]), without the auth mount.
	URL string
	// AuthPath is where the auth handler is mounted, default "/auth"; callbacks live below it.
	AuthPath string
	// JwtService issues and reads tokens.
	JwtService TokenService
	// AvatarSaver proxies pictures; nil keeps the provider's picture URL as it is.
	AvatarSaver AvatarSaver
	// Cid and Csecret are the OAuth client id and secret.
	Cid, Csecret string
	// Issuer is the token issuer (informational for providers; the token service stamps it).
	Issuer string
	// L logs; nil passes warnings and errors to the standard log (logger.Errors).
	L *slog.Logger
	// AllowedRedirect reports whether a `from` target may be redirected to after login. Nil refuses
	// every target (the login then answers with JSON instead of redirecting).
	AllowedRedirect func(from string) bool
	// HTTPClient calls the provider's token and user-info endpoints; nil uses the guarded client of
	// package outbound (10 s, 4 MiB, no redirects, public addresses only). Tests whose provider
	// listens on loopback pass outbound.New(outbound.Options{AllowPrivate: true}).
	HTTPClient *http.Client
	// UsedIDs remembers consumed single-use tokens (verified-login confirmations); nil gives each
	// verified provider its own in-memory set (one process).
	UsedIDs UsedIDs
	// SendLimiter bounds the confirmation messages of verified providers; nil gives each verified
	// provider its own in-memory limiter with the defaults (one process).
	SendLimiter SendLimiter
	// LoginGuard limits failed password logins of direct providers; nil checks passwords without
	// a limit (the service always sets one).
	LoginGuard loginlimit.Guard
	// UserIDFunc derives the user id at login; nil gives token.UserID(provider, raw id).
	UserIDFunc UserIDFunc
	// UserAttributes copies top-level user-info fields into the user's string attributes at an
	// OAuth 2.0 login: field name → attribute name (a missing field gives ""). Nil copies none.
	UserAttributes map[string]string
}

// UserIDFunc derives a user's id from the provider name, the provider's raw user id and, for OAuth
// providers, the user-info response (nil for others). The id must start with the provider name
// and "_" or be unique across providers by other means: it keys the user and the avatar.
type UserIDFunc func(provider, rawID string, data UserData) string

// CallbackURL is the redirect URI to register at the provider: URL + AuthPath + /<name>/callback.
func (p Params) CallbackURL(name string) string {
	return strings.TrimSuffix(p.URL, "/") + p.authPath() + "/" + name + "/callback"
}

func (p Params) authPath() string {
	if p.AuthPath == "" {
		return "/auth"
	}
	return "/" + strings.Trim(p.AuthPath, "/")
}

func (p Params) log() *slog.Logger {
	if p.L == nil {
		return logger.Errors
	}
	return p.L
}

// defaultClient is the guarded client of package outbound: providers' token and user-info
// endpoints are public APIs with no protocol reason to redirect, so redirects are refused.
var defaultClient = outbound.New(outbound.Options{})

// Client returns the HTTP client for calls to the provider.
func (p Params) Client() *http.Client {
	if p.HTTPClient != nil {
		return p.HTTPClient
	}
	return defaultClient
}

// SafeFrom returns from when AllowedRedirect accepts it, else "" (ignored, never followed).
func (p Params) SafeFrom(from string) string {
	if from == "" || p.AllowedRedirect == nil || !p.AllowedRedirect(from) {
		return ""
	}
	return from
}

// Error codes of the JSON refusals providers send; api/auth.yaml documents each.
const (
	CodeBadRequest       = "bad_request"
	CodeNotStarted       = "provider_starting"
	CodeBadState         = "bad_state"
	CodeProviderError    = "provider_error"
	CodeExchangeFailed   = "exchange_failed"
	CodeUserInfoFailed   = "userinfo_failed"
	CodeAudience         = "audience_not_allowed"
	CodeBadCredentials   = "bad_credentials"
	CodeBadConfirmation  = "bad_confirmation"
	CodeConfirmationUsed = "confirmation_used"
	CodeSendFailed       = "send_failed"
	// CodeTooManyConfirmations refuses a confirmation message over the SendLimiter's bounds (429).
	CodeTooManyConfirmations = "too_many_confirmations"
)

// WriteError sends the service's JSON error body.
func WriteError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	web.WriteError(w, r, status, web.Error{Code: code, Message: msg})
}

// LoginResult is what a provider has learned when a login succeeds.
type LoginResult struct {
	// User as mapped from the provider; ID is the provider's RAW user id, hashed by Finish.
	User token.User
	// Aud is the site the token is for; Session asks for session cookies; From is where to go next.
	Aud     string
	Session bool
	From    string
	// Data is the provider's user-info response, for Params.UserIDFunc; nil for non-OAuth providers.
	Data UserData
	// KeepID takes User.ID as the user's id as it is (a custom provider's KeepID): no derivation.
	KeepID bool
}

// Finish completes a login for any provider: it derives the user id under the provider's name (unless
// res.KeepID), saves the avatar, sets the cookies, then redirects (303) to a still-allowed From or
// answers with the user as JSON.
func Finish(w http.ResponseWriter, r *http.Request, p Params, name string, res LoginResult) {
	u := res.User
	switch {
	case res.KeepID:
	case p.UserIDFunc != nil:
		u.ID = p.UserIDFunc(name, u.ID, res.Data)
	default:
		u.ID = token.UserID(name, u.ID)
	}
	if p.AvatarSaver != nil {
		pic, err := p.AvatarSaver.Put(r.Context(), u.ID, u.Picture)
		if err != nil {
			// A broken picture must not block the login; the user gets no picture.
			p.log().WarnContext(r.Context(), "login: avatar", "user", u.ID, "err", err)
			pic = ""
		}
		u.Picture = pic
	}
	c := token.Claims{User: &u, SessionOnly: res.Session, AuthProvider: &token.AuthProvider{Name: name}}
	if res.Aud != "" {
		c.Audience = []string{res.Aud}
	}
	c, err := p.JwtService.Set(w, c)
	if err != nil {
		if errors.Is(err, token.ErrAudience) {
			WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
			return
		}
		web.Internal(w, r, fmt.Errorf("%s login: setting the token of user %s: %w", name, u.ID, err))
		return
	}
	if from := p.SafeFrom(res.From); from != "" {
		http.Redirect(w, r, from, http.StatusSeeOther)
		return
	}
	web.WriteJSON(w, http.StatusOK, loggedIn{Status: StatusLoggedIn, User: *c.User})
}

// Values of "status" in the bodies a login answers with 200, so a client can tell them apart
// (the spec's discriminator): the user after a completed login, a sent confirmation (verified),
// a pending request to confirm through the bot (messenger).
const (
	StatusLoggedIn = "logged in"
	StatusSent     = "sent"
	StatusPending  = "pending"
)

// loggedIn is the body of a completed login: the user, flattened, beside the status.
type loggedIn struct {
	Status string `json:"status"`
	token.User
}

// Constructor builds a built-in provider from Params (Cid and Csecret set by the caller).
type Constructor func(Params) (Provider, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Constructor{}
)

// RegisterBuiltin makes a provider available by name to auth.Service.AddProvider. Built-in
// provider files call it from init.
func RegisterBuiltin(name string, c Constructor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry[name] = c
}

// Builtin returns the constructor of a built-in provider.
func Builtin(name string) (Constructor, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	c, ok := registry[name]
	return c, ok
}

// Builtins lists the registered built-in provider names, sorted.
func Builtins() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// logoutJSON is the body of a successful logout.
type logoutJSON struct {
	Status string `json:"status"`
}

// Logout clears the session cookies and answers {"status":"logged out"}.
func Logout(w http.ResponseWriter, ts TokenService) {
	ts.Reset(w)
	web.WriteJSON(w, http.StatusOK, logoutJSON{Status: "logged out"})
}

// UserData is a decoded user-info response. Numbers are kept as json.Number so large ids survive.
type UserData map[string]any

// Value returns the field key as a string ("" when missing); numbers and booleans are formatted.
func (d UserData) Value(key string) string {
	switch v := d[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// userFor makes the user of a provider that knows only a name; its raw id is the name.
func userFor(name string) token.User { return token.User{Name: name, ID: name} }

// sessionParam reads session=1 / sess=1 from the query.
func sessionParam(r *http.Request) bool { return token.IsSessionRequest(r) }

// callback reads a provider's answer at the callback of an authorization-code login. The state
// must match the handshake cookie, which it clears, so a state works once; the handshake must be
// this provider's: a state issued for another provider (another authorization server) is refused,
// a defence against OAuth mix-up attacks. Then the provider's error, or the code. On a refusal it
// has answered and ok is false.
func (p Params) callback(w http.ResponseWriter, r *http.Request, provider string) (hc token.Claims, code string, ok bool) {
	hc, err := p.JwtService.GetHandshake(r)
	p.JwtService.ResetHandshake(w)
	q := r.URL.Query()
	if err != nil || hc.Handshake.State == "" || hc.Handshake.Provider != provider ||
		subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(hc.Handshake.State)) != 1 {
		WriteError(w, r, http.StatusBadRequest, CodeBadState, "login state missing, expired or not matching; start the login again")
		return hc, "", false
	}
	if e := q.Get("error"); e != "" {
		p.log().WarnContext(r.Context(), "login: provider error", "provider", provider, "error", e)
		WriteError(w, r, http.StatusUnauthorized, CodeProviderError, "the provider refused the login")
		return hc, "", false
	}
	code = q.Get("code")
	if code == "" {
		WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "missing code")
		return hc, "", false
	}
	return hc, code, true
}
