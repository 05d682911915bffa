package provider

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/auth/token"
)

// DefaultDevPort is the port of the dev OAuth 2.0 server when none is chosen.
const DefaultDevPort = 8084

// DevName is the name of the development provider.
const DevName = "dev"

// DevOpts configure the development provider.
type DevOpts struct {
	// Host the fake server listens on and the browser reaches it at; default "127.0.0.1".
	Host string
	// Port to listen on; 0 picks a free port (tests), DefaultDevPort is the documented default.
	Port int
	// EmailFn maps a user name to an e-mail; nil returns no e-mail (the default of real providers
	// that need an extra scope for it).
	EmailFn func(username string) string
	// Share, when Port is taken, uses the dev server already listening there instead of failing:
	// replicas of one server in dev mode share one dev server, so a login that starts on one
	// replica can end on another (the codes live in the server that issued them).
	Share bool
}

// Dev is the development-only provider: a fake OAuth 2.0 server on its own port whose login page
// accepts any user name, and the OAuth2Handler that logs in through it. Never enable it in production.
type Dev struct {
	*OAuth2Handler
	opts   DevOpts
	ln     net.Listener
	srv    *http.Server
	base   string
	mu     sync.Mutex
	codes  map[string]devCode
	tokens map[string]devToken
}

type devToken struct {
	user string
	exp  time.Time
}

type devCode struct {
	user, challenge, redirect string
	exp                       time.Time
}

// NewDev starts the fake OAuth 2.0 server (listening at once, so port 0 is resolved) and returns
// the provider. Close stops the server.
func NewDev(p Params, o DevOpts) (*Dev, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil && !(o.Share && o.Port != 0 && errors.Is(err, syscall.EADDRINUSE)) {
		return nil, err
	}
	d := &Dev{opts: o, ln: ln, codes: map[string]devCode{}, tokens: map[string]devToken{}}
	d.base = "http://" + addr
	if ln != nil {
		d.base = "http://" + ln.Addr().String()
	}
	d.OAuth2Handler = NewOAuth2Handler(p, OAuth2Config{
		Name:     DevName,
		Endpoint: oauth2.Endpoint{AuthURL: d.base + "/login/oauth/authorize", TokenURL: d.base + "/login/oauth/access_token", AuthStyle: oauth2.AuthStyleInParams},
		Scopes:   []string{"user:name"},
		InfoURL:  d.base + "/user",
		PKCE:     true,
		MapUser: func(data UserData, _ []byte) token.User {
			return token.User{ID: data.Value("id"), Name: data.Value("name"), Picture: data.Value("picture"), Email: data.Value("email")}
		},
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/oauth/authorize", d.authorizePage)
	mux.HandleFunc("POST /login/oauth/authorize", d.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", d.accessToken)
	mux.HandleFunc("GET /user", d.user)
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if ln == nil {
		p.log().Info("dev OAuth2 server: using the one already running (shared by replicas)", "url", d.base)
		return d, nil
	}
	go func() { _ = d.srv.Serve(ln) }()
	p.log().Info("dev OAuth2 server (development only)", "url", d.base)
	return d, nil
}

// URL is the base URL of the fake OAuth 2.0 server.
func (d *Dev) URL() string { return d.base }

// Close stops the fake server.
func (d *Dev) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return d.srv.Shutdown(ctx)
}

var devPage = template.Must(template.New("dev").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dev login</title>
<style>body{font-family:sans-serif;max-width:24em;margin:4em auto}input,button{font-size:1.1em;padding:.3em}</style></head>
<body><h1>Development login</h1>
<p>Any user name logs in. This fake provider exists for development only.</p>
<form method="post" action="/login/oauth/authorize">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="redirect_uri" value="{{.Redirect}}">
<input type="hidden" name="code_challenge" value="{{.Challenge}}">
<label>User name <input id="username" name="username" value="dev_user" autofocus required maxlength="64"></label>
<button id="login" type="submit">Log in</button>
</form></body></html>`))

// checkAuthorize validates the authorization request: only this service's client and callback, so
// the dev server is never an open redirector.
func (d *Dev) checkAuthorize(clientID, redirect, state, challenge, method string) error {
	switch {
	case clientID != d.conf.ClientID:
		return errors.New("unknown client_id")
	case redirect != d.conf.RedirectURL:
		return errors.New("redirect_uri is not the registered callback")
	case state == "":
		return errors.New("missing state")
	case challenge == "" || (method != "" && method != "S256"):
		return errors.New("PKCE S256 code_challenge required")
	}
	return nil
}

func (d *Dev) authorizePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := d.checkAuthorize(q.Get("client_id"), q.Get("redirect_uri"), q.Get("state"), q.Get("code_challenge"), q.Get("code_challenge_method")); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	// The page needs a form and inline style: its CSP allows exactly that. form-action names the
	// callback origin too because browsers apply it to the redirect that follows the POST.
	cb, _ := url.Parse(d.conf.RedirectURL)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+cb.Scheme+"://"+cb.Host+"; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = devPage.Execute(w, map[string]string{"State": q.Get("state"), "Redirect": q.Get("redirect_uri"), "Challenge": q.Get("code_challenge")})
}

func (d *Dev) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	user := strings.TrimSpace(f.Get("username"))
	if err := d.checkAuthorize(d.conf.ClientID, f.Get("redirect_uri"), f.Get("state"), f.Get("code_challenge"), ""); err != nil || user == "" || len(user) > 64 {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad login form")
		return
	}
	code := token.NewID()
	d.mu.Lock()
	d.prune()
	d.codes[code] = devCode{user: user, challenge: f.Get("code_challenge"), redirect: f.Get("redirect_uri"), exp: time.Now().Add(time.Minute)}
	d.mu.Unlock()
	target := f.Get("redirect_uri") + "?" + url.Values{"code": {code}, "state": {f.Get("state")}}.Encode()
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (d *Dev) accessToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	if subtle.ConstantTimeCompare([]byte(f.Get("client_id")), []byte(d.conf.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(f.Get("client_secret")), []byte(d.conf.ClientSecret)) != 1 {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	d.mu.Lock()
	c, ok := d.codes[f.Get("code")]
	delete(d.codes, f.Get("code")) // a code works once
	d.mu.Unlock()
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	switch {
	case !ok || time.Now().After(c.exp) || c.redirect != f.Get("redirect_uri"):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code")
		return
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) != 1:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verifier does not match")
		return
	}
	at := token.NewID()
	d.mu.Lock()
	d.tokens[at] = devToken{user: c.user, exp: time.Now().Add(time.Hour)}
	d.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "bearer", "expires_in": 3600})
}

func (d *Dev) user(w http.ResponseWriter, r *http.Request) {
	at, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	d.mu.Lock()
	t, found := d.tokens[at]
	d.mu.Unlock()
	name := t.user
	if !ok || !found || time.Now().After(t.exp) {
		oauthError(w, http.StatusUnauthorized, "invalid_token", "unknown access token")
		return
	}
	out := map[string]any{"id": name, "name": name, "picture": ""}
	if d.opts.EmailFn != nil {
		if e := d.opts.EmailFn(name); e != "" {
			out["email"] = e
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// prune drops expired codes and tokens so a long-running dev server does not grow without bound.
// The caller holds d.mu.
func (d *Dev) prune() {
	now := time.Now()
	for k, c := range d.codes {
		if now.After(c.exp) {
			delete(d.codes, k)
		}
	}
	for k, t := range d.tokens {
		if now.After(t.exp) {
			delete(d.tokens, k)
		}
	}
}

// oauthError writes an RFC 6749 section 5.2 error body.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}
