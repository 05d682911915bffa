// Package oauthserver is a small, customizable OAuth 2.0 authorization server (RFC 6749,
// authorization-code grant, with optional PKCE per RFC 7636). It is meant for development, for
// integration tests and for sites that want to be their own identity provider: a custom OAuth2
// provider of the auth service can point at it like at any third party.
//
// Endpoints, relative to Options.URL:
//
//	GET  /authorize  the authorization endpoint (shows the login page when WithLoginPage is set)
//	POST /authorize  the login form's target; issues the one-time code and redirects
//	POST /token      the token endpoint (grant_type=authorization_code)
//	GET  /userinfo   the user-info endpoint, bearer token required; answers {id, name, picture, email}
//
// Refusals follow RFC 6749: an unknown client or a redirect_uri that is not registered exactly is
// shown to the user and never redirected (§4.1.2.1); other authorization errors go back to the
// client's redirect_uri as error/state query parameters; the token endpoint answers the §5.2 JSON
// error body with Cache-Control: no-store.
package oauthserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Paths of the server's endpoints, relative to Options.URL.
const (
	AuthorizePath = "/authorize"
	TokenPath     = "/token"
	UserInfoPath  = "/userinfo"
)

// Client is an OAuth2 client registered at the server.
type Client struct {
	ID     string
	Secret string
	// RedirectURIs are compared to the request's redirect_uri character for character: no prefix
	// or pattern matching, because loose matching is the classic open-redirect and code-theft hole.
	RedirectURIs []string
}

// User is what the user-info endpoint reports for a logged-in user.
type User struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Picture string `json:"picture,omitempty"`
	Email   string `json:"email,omitempty"`
}

// Options configures a Server. Only URL and Clients are required.
type Options struct {
	// URL is the server's public base URL including the port, e.g. http://localhost:8084.
	URL string
	// Clients are the registered OAuth2 clients.
	Clients []Client
	// WithLoginPage shows a login page at the authorization endpoint. Without it every
	// authorization request is approved at once for DefaultUser, which suits automated tests.
	WithLoginPage bool
	// LoginPageHandler renders the login page. It must show a form that POSTs to the same
	// authorization URL (query string included) with a "username" field, and a "password" field
	// when Authenticate checks one. Nil shows a built-in page.
	LoginPageHandler http.Handler
	// Authenticate checks the login form and returns the user. It is required with WithLoginPage
	// unless AnyUser is set.
	Authenticate func(username, password string) (User, bool)
	// AnyUser lets anyone log in under any non-empty user name up to 64 characters, without a
	// password: a development server. Off by default so a forgotten Authenticate refuses to start
	// instead of letting everyone in.
	AnyUser bool
	// DefaultUser is the user approved when WithLoginPage is false; the default is "dev_user".
	DefaultUser string
	// CodeTTL bounds the life of an authorization code; default 1 minute (RFC 6749 §4.1.2
	// recommends at most 10).
	CodeTTL time.Duration
	// TokenTTL bounds the life of an access token; default 1 hour.
	TokenTTL time.Duration
	// Logger receives one line per refusal; nil logs nothing.
	Logger *slog.Logger
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
}

// Server is the authorization server; it is an http.Handler.
type Server struct {
	opts    Options
	clients map[string]Client
	mux     *http.ServeMux
	log     *slog.Logger

	mu     sync.Mutex
	codes  map[string]*grant // by code
	tokens map[string]*issued
}

// grant is an authorization code waiting to be exchanged.
type grant struct {
	clientID    string
	redirectURI string
	// redirectGiven records whether the authorization request named redirect_uri; only then must
	// the token request repeat it (§4.1.3).
	redirectGiven bool
	user          User
	challenge     string
	expires       time.Time
	used          bool
	issuedTokenID string // revoked if the code is replayed (RFC 6749 §4.1.2)
}

type issued struct {
	user    User
	expires time.Time
}

// New validates opts and returns a Server.
func New(opts Options) (*Server, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("oauthserver: URL %q must be absolute with scheme and host", opts.URL)
	}
	opts.URL = strings.TrimSuffix(opts.URL, "/")
	if len(opts.Clients) == 0 {
		return nil, errors.New("oauthserver: at least one client is required")
	}
	if opts.DefaultUser == "" {
		opts.DefaultUser = "dev_user"
	}
	if opts.CodeTTL <= 0 {
		opts.CodeTTL = time.Minute
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Authenticate == nil {
		if opts.WithLoginPage && !opts.AnyUser {
			return nil, errors.New("oauthserver: WithLoginPage needs Authenticate, or AnyUser for development")
		}
		opts.Authenticate = anyUser
	}
	s := &Server{
		opts:    opts,
		clients: map[string]Client{},
		log:     opts.Logger,
		codes:   map[string]*grant{},
		tokens:  map[string]*issued{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, c := range opts.Clients {
		if c.ID == "" || c.Secret == "" || len(c.RedirectURIs) == 0 {
			return nil, fmt.Errorf("oauthserver: client %q needs an id, a secret and a redirect URI", c.ID)
		}
		s.clients[c.ID] = c
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET "+AuthorizePath, s.authorize)
	s.mux.HandleFunc("POST "+AuthorizePath, s.authorize)
	s.mux.HandleFunc("POST "+TokenPath, s.token)
	s.mux.HandleFunc("GET "+UserInfoPath, s.userInfo)
	return s, nil
}

// Endpoint returns the endpoints for golang.org/x/oauth2 or a custom provider.
func (s *Server) Endpoint() oauth2.Endpoint {
	return oauth2.Endpoint{
		AuthURL:  s.opts.URL + AuthorizePath,
		TokenURL: s.opts.URL + TokenPath,
		// Basic auth is what RFC 6749 §2.3.1 requires servers to support.
		AuthStyle: oauth2.AuthStyleInHeader,
	}
}

// InfoURL returns the user-info endpoint's URL.
func (s *Server) InfoURL() string { return s.opts.URL + UserInfoPath }

// ServeHTTP dispatches to the endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func anyUser(username, _ string) (User, bool) {
	username = strings.TrimSpace(username)
	if username == "" || len(username) > 64 {
		return User{}, false
	}
	return User{ID: username, Name: username}, true
}

// authRequest is a parsed and validated authorization request.
type authRequest struct {
	client        Client
	redirectURI   string
	redirectGiven bool
	state         string
	challenge     string
}

// authorize is the authorization endpoint (RFC 6749 §4.1.1).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// Client and redirect URI first: until both are known-good, nothing may be redirected.
	client, ok := s.clients[q.Get("client_id")]
	if !ok {
		s.showError(w, "invalid_client", "unknown client_id")
		return
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" && len(client.RedirectURIs) == 1 {
		redirectURI = client.RedirectURIs[0] // §3.1.2.3: may be omitted when only one is registered
	}
	if !contains(client.RedirectURIs, redirectURI) {
		s.showError(w, "invalid_request", "redirect_uri does not match a registered redirect URI")
		return
	}
	ar := authRequest{client: client, redirectURI: redirectURI, redirectGiven: q.Get("redirect_uri") != "", state: q.Get("state")}
	if q.Get("response_type") != "code" {
		s.redirectError(w, r, ar, "unsupported_response_type", "only response_type=code is supported")
		return
	}
	if c := q.Get("code_challenge"); c != "" {
		if m := q.Get("code_challenge_method"); m != "S256" {
			// "plain" gives no protection against a leaked code; refuse it (RFC 7636 §4.4.1 allows that).
			s.redirectError(w, r, ar, "invalid_request", "code_challenge_method must be S256")
			return
		}
		if len(c) != 43 {
			s.redirectError(w, r, ar, "invalid_request", "code_challenge must be a base64url SHA-256 digest")
			return
		}
		ar.challenge = c
	}
	if !s.opts.WithLoginPage {
		s.approve(w, r, ar, User{ID: s.opts.DefaultUser, Name: s.opts.DefaultUser})
		return
	}
	if r.Method == http.MethodGet {
		s.loginPage(w, r, http.StatusOK)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.redirectError(w, r, ar, "invalid_request", "malformed login form")
		return
	}
	if r.PostForm.Get("deny") != "" {
		s.redirectError(w, r, ar, "access_denied", "the user denied the request")
		return
	}
	user, ok := s.opts.Authenticate(r.PostForm.Get("username"), r.PostForm.Get("password"))
	if !ok {
		s.loginPage(w, r, http.StatusUnauthorized)
		return
	}
	s.approve(w, r, ar, user)
}

// approve issues a one-time code and sends the user agent back to the client.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, ar authRequest, user User) {
	code := randomToken()
	s.mu.Lock()
	s.gcLocked()
	s.codes[code] = &grant{
		clientID:      ar.client.ID,
		redirectURI:   ar.redirectURI,
		redirectGiven: ar.redirectGiven,
		user:          user,
		challenge:     ar.challenge,
		expires:       s.opts.Now().Add(s.opts.CodeTTL),
	}
	s.mu.Unlock()
	v := url.Values{"code": {code}}
	if ar.state != "" {
		v.Set("state", ar.state)
	}
	http.Redirect(w, r, withQuery(ar.redirectURI, v), http.StatusFound)
}

// token is the token endpoint (RFC 6749 §4.1.3).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.tokenError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// §2.3.1: the credentials are form-urlencoded before being put in the header.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	client, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(secret), []byte(client.Secret)) != 1 {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
		}
		s.tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		if gt == "" {
			s.tokenError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
			return
		}
		s.tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code is supported")
		return
	}
	code := r.PostForm.Get("code")
	if code == "" {
		s.tokenError(w, http.StatusBadRequest, "invalid_request", "code is required")
		return
	}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes[code]
	switch {
	case !ok:
		s.tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown authorization code")
		return
	case g.used:
		// A replayed code means it leaked: revoke what it bought (§4.1.2).
		delete(s.tokens, g.issuedTokenID)
		s.tokenError(w, http.StatusBadRequest, "invalid_grant", "authorization code already used")
		return
	case now.After(g.expires):
		delete(s.codes, code)
		s.tokenError(w, http.StatusBadRequest, "invalid_grant", "authorization code expired")
		return
	case g.clientID != client.ID:
		s.tokenError(w, http.StatusBadRequest, "invalid_grant", "authorization code was issued to another client")
		return
	case (g.redirectGiven || r.PostForm.Has("redirect_uri")) && r.PostForm.Get("redirect_uri") != g.redirectURI:
		s.tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request")
		return
	}
	if g.challenge != "" {
		v := r.PostForm.Get("code_verifier")
		sum := sha256.Sum256([]byte(v))
		if v == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			s.tokenError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
	}
	tok := randomToken()
	g.used = true
	g.issuedTokenID = tok
	s.tokens[tok] = &issued{user: g.user, expires: now.Add(s.opts.TokenTTL)}
	noStore(w)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"token_type":   "Bearer",
		"expires_in":   int(s.opts.TokenTTL / time.Second),
	})
}

// userInfo answers the logged-in user for a bearer token (RFC 6750 errors).
func (s *Server) userInfo(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	// The scheme name is case-insensitive (RFC 7235 §2.1), so "bearer x" is as good as "Bearer x".
	scheme, tok, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_request", "error_description": "bearer token required"})
		return
	}
	s.mu.Lock()
	it, ok := s.tokens[tok]
	if ok && s.opts.Now().After(it.expires) {
		delete(s.tokens, tok)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": "unknown or expired access token"})
		return
	}
	noStore(w)
	writeJSON(w, http.StatusOK, it.user)
}

// gcLocked drops expired codes and tokens so an abandoned flow does not leak memory.
func (s *Server) gcLocked() {
	now := s.opts.Now()
	for k, g := range s.codes {
		if now.After(g.expires) {
			delete(s.codes, k)
		}
	}
	for k, t := range s.tokens {
		if now.After(t.expires) {
			delete(s.tokens, k)
		}
	}
}

// showError answers an authorization error that must not be redirected (§4.1.2.1).
func (s *Server) showError(w http.ResponseWriter, code, desc string) {
	s.log.Info("oauthserver: authorization refused", "error", code, "description", desc)
	noStore(w)
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

// redirectError sends an authorization error back to the client (§4.1.2.1).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, ar authRequest, code, desc string) {
	s.log.Info("oauthserver: authorization refused", "error", code, "description", desc, "client_id", ar.client.ID)
	v := url.Values{"error": {code}, "error_description": {desc}}
	if ar.state != "" {
		v.Set("state", ar.state)
	}
	http.Redirect(w, r, withQuery(ar.redirectURI, v), http.StatusFound)
}

func (s *Server) tokenError(w http.ResponseWriter, status int, code, desc string) {
	s.log.Info("oauthserver: token refused", "error", code, "description", desc)
	noStore(w)
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// withQuery appends v to u, keeping a query u already has (§3.1.2 allows one).
func withQuery(u string, v url.Values) string {
	if strings.Contains(u, "?") {
		return u + "&" + v.Encode()
	}
	return u + "?" + v.Encode()
}

// randomToken returns 32 random bytes in hex: unguessable codes and tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
