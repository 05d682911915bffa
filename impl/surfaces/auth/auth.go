// Package auth is the embeddable authentication service: build Options, call New, add providers,
// then mount Handlers() (the /auth handler and the avatar handler) on your router and protect routes
// with Middleware(). Tokens live in package token, middleware in package middleware, login methods
// in package provider.
//
//	svc, _ := auth.New(auth.Options{SecretReader: token.SecretFunc(...), URL: "https://example.com"})
//	svc.AddProvider("github", cid, csecret)
//	authH, avatarH := svc.Handlers()
//	r.Mount("/auth", authH); r.Mount("/avatar", avatarH)
//	r.With(svc.Middleware().Auth).Get("/private", ...)
package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/sessions"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Options configure the Service. Only SecretReader and URL are required; every other field has the
// default its comment names.
type Options struct {
	// SecretReader returns the JWT secret for an audience (the token's aud, the `site` or `aud` of
	// a login), so each site may have its own secret; one that ignores aud gives every site the
	// same secret. Required.
	SecretReader token.SecretReader
	// TokenDuration is the JWT lifetime; default 15 minutes. Short, because a token cannot be revoked.
	TokenDuration time.Duration
	// CookieDuration is the cookie lifetime; default 31 days. Past it the user logs in again; within
	// it an expired token is refreshed by the middleware.
	CookieDuration time.Duration
	// Issuer goes into iss and is required of incoming tokens; default "triad".
	Issuer string
	// AcceptIssuers are further iss values accepted on incoming tokens (new tokens carry Issuer),
	// e.g. "go-pkgz/auth" while a site migrates (docs/auth-migration.md); default none.
	AcceptIssuers []string
	// URL is the public base URL of the site, e.g. "https://example.com". Required: OAuth callbacks
	// and the same-host redirect rule derive from it.
	URL string
	// AuthPath is where Handlers()'s auth handler is mounted; default "/auth".
	AuthPath string
	// AvatarStore keeps proxied avatars (a store of impl/surfaces/auth/avatar's filestore, boltstore, mongostore
	// or pgstore). Nil disables the proxy: users keep the provider's picture URL and the avatar
	// handler answers 404. The caller owns and closes it.
	AvatarStore avatar.Store
	// AvatarRoutePath is where the avatar handler is mounted; default "/avatar".
	AvatarRoutePath string
	// AvatarResizeLimit is the avatar size limit in pixels; 0 (default) disables resizing.
	AvatarResizeLimit int
	// AvatarHTTPClient fetches pictures; nil uses the avatar package's guarded client (no private
	// addresses, size and time limits).
	AvatarHTTPClient *http.Client
	// Audiences, when non-empty, are the only aud values tokens may be created for or carry.
	Audiences []string
	// Validator runs on every request through the Auth middleware; false rejects the token.
	Validator token.Validator
	// ClaimsUpdater runs at token creation and refresh.
	ClaimsUpdater token.ClaimsUpdater
	// UserUpdater runs on every request through the UpdateUser middleware.
	UserUpdater middleware.UserUpdater
	// AdminPasswd enables basic auth for user "admin"; empty (default) disables it.
	AdminPasswd string
	// BasicAuthChecker enables basic auth with a custom checker; it wins over AdminPasswd.
	BasicAuthChecker middleware.BasicAuthFunc
	// LoginGuard limits failed password logins: direct providers' logins and basic auth (user
	// name and client address; a refused login is 429 too_many_attempts with Retry-After, its
	// password not checked). Default in memory, loginlimit.NewMemory's defaults (10 wrong
	// passwords per user and client address in 15 minutes), one process only; replicas share one
	// (the reference server passes its PostgreSQL guard).
	LoginGuard loginlimit.Guard
	// Sessions records the sessions ended by logout (GET/POST AuthPath/logout and each provider's
	// logout): a token of a revoked session, even one captured before, is refused and never
	// refreshed. Default in memory (sessions.NewMemory), one process only; replicas share one
	// (pgstate.NewSessions, the reference server's: every replica refuses it within a second).
	Sessions sessions.Store
	// Logger receives the service's log lines: any value with Logf(format string, args ...any),
	// the seed's Logger (logger.Std, logger.NoOp, logger.Func(f), a type of your own), or a
	// *slog.Logger as logger.FromSlog(s), which keeps its records structured. Default nil: warnings
	// and errors (every 500's cause with its request id, an outbound call the guard refused) go to
	// the process's standard log (slog.Default()), the rest nowhere; logger.NoOp silences all.
	Logger logger.L
	// SecureCookies marks cookies Secure; default false so plain-HTTP development works. Turn it on
	// behind HTTPS.
	SecureCookies bool
	// SameSite of the cookies; default Lax.
	SameSite http.SameSite
	// XSRFIgnoreMethods lists methods whose cookie-borne tokens need no X-XSRF-TOKEN header; default
	// none (every method is checked).
	XSRFIgnoreMethods []string
	// DisableXSRF turns off the XSRF check; default false.
	DisableXSRF bool
	// AllowedRedirectHosts are origins besides URL's own (which is matched exactly: scheme, host and
	// port) that a login `from` may redirect to; default none. An entry is "scheme://host[:port]"
	// (that origin), "host:port" (that port, http or https) or a bare "host" (its default ports
	// only). A `from` elsewhere is ignored, never followed.
	AllowedRedirectHosts []string
	// HTTPClient calls OAuth providers; default a client with a 10 s timeout.
	HTTPClient *http.Client
	// UsedIDs remembers used single-use confirmation tokens (verified providers); default in
	// memory, which holds for one process only. Replicas share one through PostgreSQL (pgstate.New),
	// or a confirmation replayed on another replica logs in again.
	UsedIDs provider.UsedIDs
	// SendLimiter bounds the confirmation messages of verified providers (per recipient and per
	// client); default in memory, provider.NewMemorySendLimiter's defaults, one process only.
	SendLimiter provider.SendLimiter
	// JWTCookieName, JWTCookieDomain, JWTHeaderKey, XSRFCookieName, XSRFHeaderKey and JWTQuery
	// rename the token's transports for a site that already uses other names; defaults "JWT", ""
	// (host-only cookies), "X-JWT", "XSRF-TOKEN", "X-XSRF-TOKEN" and "token".
	JWTCookieName, JWTCookieDomain, JWTHeaderKey, XSRFCookieName, XSRFHeaderKey, JWTQuery string
	// ErrorHandler writes the middleware's refusals (401 from Auth, Admin and RBAC without a user,
	// 403 from Admin and RBAC), e.g. a redirect to the site's login page; default the JSON Error body.
	ErrorHandler middleware.ErrorHandlerFunc
	// RolesIgnoreCase makes RBAC match roles case-insensitively; default exact.
	RolesIgnoreCase bool
	// UserIDFunc derives user ids at login; default "<provider>_" + SHA-1 of the provider's id
	// (token.UserID). provider.GoPkgzUserID keeps the ids go-pkgz/auth gave.
	UserIDFunc provider.UserIDFunc
	// LoginPage serves the demo login page (see Service.LoginPage) at the root of the auth handler
	// (GET AuthPath, and AuthPath + "/"); default off. LoginPageDirect names the direct provider its form uses.
	LoginPage       bool
	LoginPageDirect string
}

// Defaults of Options.
const (
	DefaultIssuer          = "triad"
	DefaultAuthPath        = "/auth"
	DefaultAvatarRoutePath = "/avatar"
)

// Errors of provider registration.
var (
	ErrDuplicateProvider = errors.New("auth: provider already registered")
	ErrBadProviderName   = errors.New("auth: bad provider name")
	ErrUnknownProvider   = errors.New("auth: no built-in provider of that name")
)

// Service is the auth service: token service, providers, handlers and middleware.
type Service struct {
	opts      Options
	log       *slog.Logger // opts.Logger as slog
	jwt       *token.Service
	auth      *middleware.Authenticator
	redirect  func(string) bool
	avatar    provider.AvatarSaver
	proxy     *avatar.Proxy
	avatarH   http.Handler
	mu        sync.RWMutex
	providers []provider.Provider
	closers   []func() error
}

// New builds a Service from opts, filling defaults.
func New(opts Options) (*Service, error) {
	if opts.SecretReader == nil {
		return nil, errors.New("auth: Options.SecretReader is required")
	}
	if opts.URL == "" {
		return nil, errors.New("auth: Options.URL is required")
	}
	if opts.Issuer == "" {
		opts.Issuer = DefaultIssuer
	}
	if opts.AuthPath == "" {
		opts.AuthPath = DefaultAuthPath
	}
	if opts.AvatarRoutePath == "" {
		opts.AvatarRoutePath = DefaultAvatarRoutePath
	}
	opts.URL = strings.TrimSuffix(opts.URL, "/")
	if opts.UsedIDs == nil {
		// One set for every verified provider of the service (their ids are random, never shared).
		opts.UsedIDs = provider.NewMemoryUsedIDs()
	}
	if opts.Sessions == nil {
		opts.Sessions = sessions.NewMemory(nil)
	}
	if opts.LoginGuard == nil {
		opts.LoginGuard = loginlimit.NewMemory(0, 0, nil)
	}
	if opts.SendLimiter == nil {
		opts.SendLimiter = provider.NewMemorySendLimiter(0, 0, 0, nil)
	}
	s := &Service{opts: opts, log: logger.Of(opts.Logger)}
	s.jwt = token.NewService(token.Opts{
		SecretReader: opts.SecretReader, ClaimsUpd: opts.ClaimsUpdater, SecureCookies: opts.SecureCookies,
		SameSite: opts.SameSite, TokenDuration: opts.TokenDuration, CookieDuration: opts.CookieDuration,
		Issuer: opts.Issuer, Audiences: opts.Audiences, XSRFIgnoreMethods: opts.XSRFIgnoreMethods,
		DisableXSRF: opts.DisableXSRF, AcceptIssuers: opts.AcceptIssuers,
		JWTCookieName: opts.JWTCookieName, JWTCookieDomain: opts.JWTCookieDomain, JWTHeaderKey: opts.JWTHeaderKey,
		XSRFCookieName: opts.XSRFCookieName, XSRFHeaderKey: opts.XSRFHeaderKey, JWTQuery: opts.JWTQuery,
	})
	s.auth = &middleware.Authenticator{
		JWTService: s.jwt, Validator: opts.Validator, AdminPasswd: opts.AdminPasswd,
		BasicAuthChecker: opts.BasicAuthChecker, LoginGuard: opts.LoginGuard, Sessions: opts.Sessions, UserUpdater: opts.UserUpdater, L: s.log,
		ProviderKnown: s.isProvider, ErrorHandler: opts.ErrorHandler, RolesIgnoreCase: opts.RolesIgnoreCase,
	}
	s.redirect = provider.NewRedirectValidator(opts.URL, opts.AllowedRedirectHosts)
	if err := s.initAvatar(); err != nil {
		return nil, err
	}
	return s, nil
}

// TokenService returns the token service (to create or read tokens outside the handlers).
func (s *Service) TokenService() *token.Service { return s.jwt }

// Middleware returns the authenticator whose Auth, Admin, Trace, RBAC and UpdateUser wrap handlers.
func (s *Service) Middleware() *middleware.Authenticator { return s.auth }

// Params returns the provider parameters the service gives its providers, with client id and secret.
func (s *Service) Params(cid, csecret string) provider.Params {
	return provider.Params{
		URL: s.opts.URL, AuthPath: s.opts.AuthPath, JwtService: s.jwt, AvatarSaver: s.avatar,
		Cid: cid, Csecret: csecret, Issuer: s.opts.Issuer, L: s.log,
		AllowedRedirect: s.redirect, HTTPClient: s.opts.HTTPClient, UsedIDs: s.opts.UsedIDs, SendLimiter: s.opts.SendLimiter,
		LoginGuard: s.opts.LoginGuard,
		UserIDFunc: s.opts.UserIDFunc,
	}
}

// reserved names would collide with the service's own routes.
var reserved = []string{"list", "user", "status", "logout", "login", "callback"}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// AddCustomHandler registers any Provider (non-OAuth login methods, hand-built OAuth handlers).
func (s *Service) AddCustomHandler(p provider.Provider) error {
	name := p.Name()
	// A provider named like a one-segment AuthPath ("auth") would make /auth/login ambiguous for a
	// handler that strips its own path (see Handlers).
	if !validName.MatchString(name) || slices.Contains(reserved, name) || name == strings.Trim(s.opts.AuthPath, "/") {
		return fmt.Errorf("%w: %q", ErrBadProviderName, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.providers {
		if q.Name() == name {
			return fmt.Errorf("%w: %q", ErrDuplicateProvider, name)
		}
	}
	s.providers = append(s.providers, p)
	if c, ok := p.(interface{ Close() error }); ok {
		s.closers = append(s.closers, c.Close)
	}
	return nil
}

// AddProvider registers a built-in provider by name with its client id and secret. "dev" with an
// empty id and secret starts the development provider on its default port (8084).
func (s *Service) AddProvider(name, cid, csecret string) error {
	if name == provider.DevName && cid == "" && csecret == "" {
		return s.AddDevProvider("", provider.DefaultDevPort)
	}
	c, ok := provider.Builtin(name)
	if !ok {
		return fmt.Errorf("%w: %q (known: %s)", ErrUnknownProvider, name, strings.Join(provider.Builtins(), ", "))
	}
	p, err := c(s.Params(cid, csecret))
	if err != nil {
		return fmt.Errorf("auth: provider %s: %w", name, err)
	}
	return s.AddCustomHandler(p)
}

// AddProviderWithUserAttributes is AddProvider for an OAuth 2.0 built-in (every one but twitter)
// that also copies user-info fields into the user's string attributes, e.g.
// {"email": "email"}; see provider.Params.UserAttributes.
func (s *Service) AddProviderWithUserAttributes(name, cid, csecret string, attrs map[string]string) error {
	c, ok := provider.Builtin(name)
	if !ok {
		return fmt.Errorf("%w: %q (known: %s)", ErrUnknownProvider, name, strings.Join(provider.Builtins(), ", "))
	}
	p := s.Params(cid, csecret)
	p.UserAttributes = attrs
	h, err := c(p)
	if err != nil {
		return fmt.Errorf("auth: provider %s: %w", name, err)
	}
	if _, ok := h.(*provider.OAuth2Handler); !ok {
		return fmt.Errorf("auth: provider %s: user attributes need an OAuth 2.0 provider", name)
	}
	return s.AddCustomHandler(h)
}

// AddDevProvider starts the development-only fake OAuth 2.0 server on host:port (host "" is
// 127.0.0.1; port 0 picks a free port) and registers it as "dev". Close stops it.
func (s *Service) AddDevProvider(host string, port int) error {
	return s.AddDevProviderOpts(provider.DevOpts{Host: host, Port: port})
}

// AddDevProviderOpts is AddDevProvider with every option (e.g. the username-to-e-mail mapping).
func (s *Service) AddDevProviderOpts(o provider.DevOpts) error {
	d, err := provider.NewDev(s.Params("", ""), o)
	if err != nil {
		return fmt.Errorf("auth: dev provider: %w", err)
	}
	if err := s.AddCustomHandler(d); err != nil {
		_ = d.Close()
		return err
	}
	return nil
}

// DevProvider returns the registered dev provider (for its URL), or nil.
func (s *Service) DevProvider() *provider.Dev {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.providers {
		if d, ok := p.(*provider.Dev); ok {
			return d
		}
	}
	return nil
}

// AddCustomProvider registers an OAuth 2.0 provider the service has no built-in for, in one call:
// its name, client, endpoints, user-info URL, user mapping and scopes (see provider.CustomOAuth2).
// Register <URL><AuthPath>/<name>/callback as its redirect URI.
func (s *Service) AddCustomProvider(c provider.CustomOAuth2) error {
	h, err := provider.NewCustomOAuth2(s.Params(c.Cid, c.Csecret), c)
	if err != nil {
		return err
	}
	return s.AddCustomHandler(h)
}

// AddDirectProvider registers a login checked by the caller's CredChecker.
func (s *Service) AddDirectProvider(name string, cc provider.CredChecker) error {
	if cc == nil {
		return errors.New("auth: direct provider needs a CredChecker")
	}
	return s.AddCustomHandler(&provider.DirectHandler{Params: s.Params("", ""), ProviderName: name, CredChecker: cc})
}

// AddDirectProviderWithUserIDFunc is AddDirectProvider whose user's raw id is f(user name, request)
// instead of the name (see provider.DirectHandler.RawUserID); Options.UserIDFunc still derives the
// stored id from it. It is the counterpart of go-pkgz/auth's method of the same name: with
// UserIDFunc: provider.GoPkgzUserID the ids are the ones go-pkgz gave.
func (s *Service) AddDirectProviderWithUserIDFunc(name string, cc provider.CredChecker, f provider.DirectUserIDFunc) error {
	if cc == nil || f == nil {
		return errors.New("auth: direct provider needs a CredChecker and a user id func")
	}
	return s.AddCustomHandler(&provider.DirectHandler{Params: s.Params("", ""), ProviderName: name, CredChecker: cc, RawUserID: f})
}

// AddVerifProvider registers a login confirmed by a token sent through sender, with a message
// template using {{.Address}}, {{.User}}, {{.Token}} and {{.Site}}.
func (s *Service) AddVerifProvider(name, msgTmpl string, sender provider.Sender) error {
	h, err := provider.NewVerifyHandler(s.Params("", ""), name, msgTmpl, sender)
	if err != nil {
		return err
	}
	// The aud a caller names is mailed to the recipient: only the configured audiences, or this
	// site (the issuer) when there are none.
	h.AudienceAllowed = func(aud string) bool {
		return slices.Contains(s.opts.Audiences, aud) || len(s.opts.Audiences) == 0 && aud == s.opts.Issuer
	}
	return s.AddCustomHandler(h)
}

// AvatarProxy returns the avatar proxy (to store a picture for a user logged in some other way),
// or nil when Options.AvatarStore is nil.
func (s *Service) AvatarProxy() *avatar.Proxy { return s.proxy }
