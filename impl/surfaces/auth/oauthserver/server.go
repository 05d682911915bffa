// Package oauthserver is a small, customizable OAuth 2.0 authorization server (RFC 6749,
// authorization-code grant, with optional PKCE per RFC 7636). It is meant for development, for
// integration tests and for sites that want to be their own identity provider: a custom OAuth2
// provider of the auth service can point at it like at any third party.
//
// It is the one OAuth 2.0 server of the tree: the auth service's dev provider runs it with a login
// page that lets any user name in, and the provider tests' stand-ins for third parties run it with
// their providers' paths and approve at once.
//
// Endpoints, relative to Options.URL (Options.Paths may move them):
//
//	GET  /authorize  the authorization endpoint (shows the login page when WithLoginPage is set)
//	POST /authorize  the login form's target; issues the one-time code and redirects (303)
//	POST /token      the token endpoint (grant_type=authorization_code)
//	GET  /userinfo   the user-info endpoint, bearer token required; answers {id, name, picture, email}
//
// Refusals follow RFC 6749: an unknown client or a redirect_uri that is not registered exactly is
// shown to the user and never redirected (§4.1.2.1); other authorization errors go back to the
// client's redirect_uri as error/state query parameters; the token endpoint answers the §5.2 JSON
// error body with Cache-Control: no-store.
package oauthserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/logger"
)

// Default paths of the server's endpoints, relative to Options.URL.
const (
	AuthorizePath = "/authorize"
	TokenPath     = "/token"
	UserInfoPath  = "/userinfo"
)

// Paths places the endpoints, relative to Options.URL. A path may hold http.ServeMux wildcards
// ("/{tenant}/oauth2/v2.0/token"). Empty fields take the defaults above; UserInfo "-" serves no
// user-info endpoint (a caller that answers it itself reads the tokens with Server.Lookup).
type Paths struct {
	Authorize, Token, UserInfo string
}

// Client is an OAuth2 client registered at the server.
type Client struct {
	ID     string
	Secret string
	// RedirectURIs are compared to the request's redirect_uri character for character: no prefix
	// or pattern matching, because loose matching is the classic open-redirect and code-theft hole.
	RedirectURIs []string
	// MatchRedirectURI, when set, replaces that comparison. It exists for test peers standing in
	// for a third party, which accept whatever callback the site under test sends; a server users
	// log in to must leave it nil.
	MatchRedirectURI func(uri string) bool
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
	// Paths moves the endpoints; the zero value serves the defaults.
	Paths Paths
	// RequirePKCE refuses authorization requests without an S256 code_challenge (RFC 9700 §2.1.1
	// asks it of every client).
	RequirePKCE bool
	// WithLoginPage shows a login page at the authorization endpoint. Without it every
	// authorization request is decided at once by Approve, which suits automated tests.
	WithLoginPage bool
	// Approve decides an authorization request when WithLoginPage is false: the user to approve,
	// or false to answer access_denied (as if the user clicked Cancel). Nil approves DefaultUser.
	Approve func(r *http.Request) (User, bool)
	// LoginPageHandler renders the login page. It must show a form that POSTs to the same
	// authorization URL (query string included) with a "username" field, and a "password" field
	// when Authenticate checks one. Nil shows a built-in page. A function, as the seed has it
	// (func(w http.ResponseWriter, r *http.Request)); any http.Handler h fits as h.ServeHTTP.
	LoginPageHandler http.HandlerFunc
	// Authenticate checks the login form and returns the user. It is required with WithLoginPage
	// unless AnyUser is set.
	Authenticate func(username, password string) (User, bool)
	// AnyUser lets anyone log in under any non-empty user name up to 64 characters, without a
	// password (the built-in page asks for none): a development server. Authenticate, when also
	// set, turns the name into the user (its password argument is then empty) and may refuse it.
	// Off by default so a forgotten Authenticate refuses to start instead of letting everyone in.
	AnyUser bool
	// DefaultUser is the user approved when WithLoginPage is false and Approve is nil, and the
	// name the built-in page suggests with AnyUser; the default is "dev_user".
	DefaultUser string
	// CodeTTL bounds the life of an authorization code; default 1 minute (RFC 6749 §4.1.2
	// recommends at most 10).
	CodeTTL time.Duration
	// TokenTTL bounds the life of an access token; default 1 hour.
	TokenTTL time.Duration
	// Logger receives one line per refusal: any value with Logf (logger.Std, a logger.Func, a
	// type of your own, logger.FromSlog(s)); nil passes warnings and errors to the standard log
	// (logger.Errors), logger.NoOp logs nothing.
	Logger logger.L
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
	switch {
	case opts.AnyUser:
		opts.Authenticate = anyUser(opts.Authenticate)
	case opts.Authenticate == nil && opts.WithLoginPage:
		return nil, errors.New("oauthserver: WithLoginPage needs Authenticate, or AnyUser for development")
	}
	if opts.Approve == nil {
		dflt := User{ID: opts.DefaultUser, Name: opts.DefaultUser}
		opts.Approve = func(*http.Request) (User, bool) { return dflt, true }
	}
	def := func(p *string, d string) {
		if *p == "" {
			*p = d
		}
	}
	def(&opts.Paths.Authorize, AuthorizePath)
	def(&opts.Paths.Token, TokenPath)
	def(&opts.Paths.UserInfo, UserInfoPath)
	s := &Server{
		opts:    opts,
		clients: map[string]Client{},
		log:     logger.Of(opts.Logger),
		codes:   map[string]*grant{},
		tokens:  map[string]*issued{},
	}
	for _, c := range opts.Clients {
		if c.ID == "" || c.Secret == "" || (len(c.RedirectURIs) == 0 && c.MatchRedirectURI == nil) {
			return nil, fmt.Errorf("oauthserver: client %q needs an id, a secret and a redirect URI", c.ID)
		}
		s.clients[c.ID] = c
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET "+opts.Paths.Authorize, s.authorize)
	s.mux.HandleFunc("POST "+opts.Paths.Authorize, s.authorize)
	s.mux.HandleFunc("POST "+opts.Paths.Token, s.token)
	if opts.Paths.UserInfo != "-" {
		s.mux.HandleFunc("GET "+opts.Paths.UserInfo, s.userInfo)
	}
	return s, nil
}

// Endpoint returns the endpoints for golang.org/x/oauth2 or a custom provider.
func (s *Server) Endpoint() oauth2.Endpoint {
	return oauth2.Endpoint{
		AuthURL:  s.opts.URL + s.opts.Paths.Authorize,
		TokenURL: s.opts.URL + s.opts.Paths.Token,
		// Basic auth is what RFC 6749 §2.3.1 requires servers to support.
		AuthStyle: oauth2.AuthStyleInHeader,
	}
}

// InfoURL returns the user-info endpoint's URL.
func (s *Server) InfoURL() string { return s.opts.URL + s.opts.Paths.UserInfo }

// URL is the server's base URL, without a trailing slash.
func (s *Server) URL() string { return s.opts.URL }

// ServeHTTP dispatches to the endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// anyUser lets any user name of 1 to 64 characters in, without a password, through then (when set).
func anyUser(then func(username, password string) (User, bool)) func(string, string) (User, bool) {
	return func(username, _ string) (User, bool) {
		username = strings.TrimSpace(username)
		if username == "" || len(username) > 64 {
			return User{}, false
		}
		if then != nil {
			return then(username, "")
		}
		return User{ID: username, Name: username}, true
	}
}
