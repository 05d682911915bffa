// Package token issues, parses and transports the auth service's JWTs: HS256 tokens carrying a User,
// sent as an HttpOnly cookie guarded by an XSRF cookie/header pair, or as a header or query value.
// It also defines the hooks (SecretReader, ClaimsUpdater, Validator) and the request-context helpers.
package token

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are the JWT claims: the registered ones (aud, iss, exp, iat, jti) plus the user.
type Claims struct {
	jwt.RegisteredClaims
	// User is the logged-in user; nil in handshake and confirmation tokens, which therefore never
	// authenticate a request.
	User *User `json:"user,omitempty"`
	// SessionOnly marks a login whose cookies must not outlive the browser session; refreshes keep it.
	SessionOnly bool `json:"sess_only,omitempty"`
	// AuthTime is when the user actually logged in (Unix seconds). Refreshes keep it, so a stolen
	// cookie cannot be refreshed forever: past AuthTime+CookieDuration a new login is required.
	AuthTime int64 `json:"auth_time,omitempty"`
	// AuthProvider names the provider that logged the user in. The middleware checks it (rather
	// than the user id's prefix) against the registered providers, so ids without a provider
	// prefix (see provider.UserIDFunc) still name their provider. Tokens of go-pkgz/auth carry it too.
	AuthProvider *AuthProvider `json:"auth_provider,omitempty"`
	// Handshake carries login-flow state (OAuth2 state, PKCE verifier, redirect target) or a
	// confirmation request; tokens with it are never accepted as sessions.
	Handshake *Handshake `json:"handshake,omitempty"`
}

// AuthProvider is the provider claim of a session token.
type AuthProvider struct {
	// Name of the provider, as registered with the service.
	Name string `json:"name,omitempty"`
}

// ProviderName returns the provider that issued the session: the auth_provider claim when present,
// else the prefix of the user id ("github" for "github_3f2a…").
func (c Claims) ProviderName() string {
	if c.AuthProvider != nil && c.AuthProvider.Name != "" {
		return c.AuthProvider.Name
	}
	if c.User == nil {
		return ""
	}
	return c.User.Provider()
}

// Aud returns the single audience of the claims, or "".
func (c Claims) Aud() string {
	if len(c.Audience) == 0 {
		return ""
	}
	return c.Audience[0]
}

// Errors returned by the Service. Callers map them to HTTP statuses; they never reach clients verbatim.
var (
	// ErrNoToken: the request carries no token at all.
	ErrNoToken = errors.New("token: no token in request")
	// ErrInvalid: the token is malformed, badly signed, signed with a refused algorithm, from another
	// issuer, or otherwise unacceptable.
	ErrInvalid = errors.New("token: invalid token")
	// ErrExpired: a cookie-borne token whose signature is good but whose exp has passed. Get returns
	// its claims with this error so the middleware may refresh it.
	ErrExpired = errors.New("token: token expired")
	// ErrXSRF: a cookie-borne token came without a matching X-XSRF-TOKEN header.
	ErrXSRF = errors.New("token: XSRF header missing or wrong")
	// ErrAudience: the aud is not one of the allowed audiences.
	ErrAudience = errors.New("token: audience not allowed")
	// ErrSecret: the SecretReader failed or returned an empty secret.
	ErrSecret = errors.New("token: no secret")
)

// Defaults of Opts.
const (
	DefaultTokenDuration     = 15 * time.Minute
	DefaultCookieDuration    = 31 * 24 * time.Hour
	DefaultHandshakeDuration = 15 * time.Minute
	DefaultJWTCookieName     = "JWT"
	DefaultJWTHeaderKey      = "X-JWT"
	DefaultXSRFCookieName    = "XSRF-TOKEN"
	DefaultXSRFHeaderKey     = "X-XSRF-TOKEN"
	DefaultJWTQuery          = "token"
	DefaultHandshakeCookie   = "AUTH-HANDSHAKE"
)

// NotBeforeLeeway is how far in the future a token's nbf may be and the token still be accepted:
// it absorbs clock skew between the issuer and this process (replicas, or a peer that mints
// tokens with the shared secret) without opening a meaningful window.
const NotBeforeLeeway = 30 * time.Second

// Opts configure a Service. Zero values take the defaults above.
type Opts struct {
	// SecretReader returns the signing secret for an audience. Required.
	SecretReader SecretReader
	// ClaimsUpd is called on token creation and refresh (Set); optional.
	ClaimsUpd ClaimsUpdater
	// SecureCookies marks cookies Secure (HTTPS only). Off by default so plain-HTTP development works.
	SecureCookies bool
	// SameSite of the cookies; 0 means Lax, which sends them on top-level navigations (needed for
	// OAuth callbacks) but not on cross-site subrequests.
	SameSite http.SameSite
	// TokenDuration is the JWT lifetime, default 15 minutes.
	TokenDuration time.Duration
	// CookieDuration is the cookie lifetime and the longest a login can be refreshed, default 31 days.
	CookieDuration time.Duration
	// HandshakeDuration is how long a login in progress (or a confirmation token) stays valid, default 15 minutes.
	HandshakeDuration time.Duration
	// Issuer goes in iss and is required of parsed tokens when set.
	Issuer string
	// AcceptIssuers are further iss values accepted on parsed tokens (never written): a site moving
	// from another issuer name keeps its users' sessions.
	AcceptIssuers []string
	// Audiences, when non-empty, is the list of acceptable aud values: creating or accepting a token
	// for any other audience fails with ErrAudience.
	Audiences []string
	// XSRFIgnoreMethods lists HTTP methods for which a cookie-borne token needs no XSRF header.
	// Empty by default: every method is checked.
	XSRFIgnoreMethods []string
	// DisableXSRF turns the XSRF check off entirely (tests, non-browser deployments).
	DisableXSRF bool
	// JWTCookieName, JWTCookieDomain, JWTHeaderKey, XSRFCookieName, XSRFHeaderKey, JWTQuery and
	// HandshakeCookieName override the transport names.
	JWTCookieName, JWTCookieDomain, JWTHeaderKey, XSRFCookieName, XSRFHeaderKey, JWTQuery, HandshakeCookieName string
	// Now is the clock; nil means time.Now. Tests move it to expire tokens.
	Now func() time.Time
}

// Service creates, parses and transports tokens. It is safe for concurrent use.
type Service struct {
	Opts
	// macs keeps keyed HMAC states per secret (hs256.go).
	macs macs
	// jwtHeader and xsrfHeader are the canonical forms of the header names, so reading them on
	// each request does not canonicalise (and allocate) again.
	jwtHeader, xsrfHeader canonKey
}

// canonKey is a header name and its canonical form.
type canonKey struct{ raw, canon string }

func newCanonKey(raw string) canonKey { return canonKey{raw, http.CanonicalHeaderKey(raw)} }

// value returns r's header named raw, as r.Header.Get(raw) does; the canonical form is cached for
// the name the Service was made with (Opts may be changed since).
func (k canonKey) value(r *http.Request, raw string) string {
	canon := k.canon
	if raw != k.raw {
		canon = http.CanonicalHeaderKey(raw)
	}
	if v := r.Header[canon]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// XSRFHeader returns the request's XSRF header (XSRFHeaderKey), "" when absent.
func (s *Service) XSRFHeader(r *http.Request) string { return s.xsrfHeader.value(r, s.XSRFHeaderKey) }

// NewService returns a Service with defaults filled in.
func NewService(o Opts) *Service {
	if o.TokenDuration <= 0 {
		o.TokenDuration = DefaultTokenDuration
	}
	if o.CookieDuration <= 0 {
		o.CookieDuration = DefaultCookieDuration
	}
	if o.HandshakeDuration <= 0 {
		o.HandshakeDuration = DefaultHandshakeDuration
	}
	if o.SameSite == 0 {
		o.SameSite = http.SameSiteLaxMode
	}
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&o.JWTCookieName, DefaultJWTCookieName)
	def(&o.JWTHeaderKey, DefaultJWTHeaderKey)
	def(&o.XSRFCookieName, DefaultXSRFCookieName)
	def(&o.XSRFHeaderKey, DefaultXSRFHeaderKey)
	def(&o.JWTQuery, DefaultJWTQuery)
	def(&o.HandshakeCookieName, DefaultHandshakeCookie)
	if o.Now == nil {
		o.Now = time.Now
	}
	// Parse accepts HS256 only (see verify) and checks time claims by hand in validate, so an
	// expired token's claims can still be read for a refresh.
	return &Service{Opts: o, jwtHeader: newCanonKey(o.JWTHeaderKey), xsrfHeader: newCanonKey(o.XSRFHeaderKey)}
}

// AllowedAudience reports whether aud may be used: always when Audiences is empty.
func (s *Service) AllowedAudience(aud string) bool {
	return len(s.Audiences) == 0 || slices.Contains(s.Audiences, aud)
}

func (s *Service) secret(aud string) (string, error) {
	if s.SecretReader == nil {
		return "", ErrSecret
	}
	sec, err := s.SecretReader.Get(aud)
	if err != nil || sec == "" {
		return "", fmt.Errorf("%w for aud %q", ErrSecret, aud)
	}
	return sec, nil
}

// Token signs claims as they are (no defaults added) with the secret of their audience.
func (s *Service) Token(c Claims) (string, error) {
	if !s.AllowedAudience(c.Aud()) {
		return "", fmt.Errorf("%w: %q", ErrAudience, c.Aud())
	}
	key, err := s.secret(c.Aud())
	if err != nil {
		return "", err
	}
	return sign(key, &s.macs, c)
}

// Parse verifies a token string and returns its claims. An expired token returns its claims and an
// error wrapping ErrExpired; every other failure returns ErrInvalid, ErrAudience or ErrSecret.
func (s *Service) Parse(tokenString string) (Claims, error) {
	c, err := s.verify(tokenString)
	if err != nil {
		if errors.Is(err, ErrSecret) {
			return Claims{}, err
		}
		return Claims{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return c, s.validate(c)
}

func (s *Service) validate(c Claims) error {
	if s.Issuer != "" && c.Issuer != s.Issuer && !slices.Contains(s.AcceptIssuers, c.Issuer) {
		return fmt.Errorf("%w: issuer %q", ErrInvalid, c.Issuer)
	}
	if !s.AllowedAudience(c.Aud()) {
		return fmt.Errorf("%w: %q", ErrAudience, c.Aud())
	}
	if c.ExpiresAt == nil {
		return fmt.Errorf("%w: no exp", ErrInvalid)
	}
	now := s.Now()
	// RFC 7519 §4.1.5: a token must not be accepted before its nbf. It is checked before exp and
	// refused as invalid (never ErrExpired), so a not-yet-valid cookie is not refreshed either.
	if c.NotBefore != nil && now.Add(NotBeforeLeeway).Before(c.NotBefore.Time) {
		return fmt.Errorf("%w: not valid before %s", ErrInvalid, c.NotBefore.Time.UTC().Format(time.RFC3339))
	}
	if !now.Before(c.ExpiresAt.Time) {
		return ErrExpired
	}
	return nil
}

// NewID returns a random token id (jti), 128 bits, URL-safe.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
