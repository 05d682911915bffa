package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// DefaultDevPort is the port of the dev OAuth 2.0 server when none is chosen.
const DefaultDevPort = 8084

// DevName is the name of the development provider.
const DevName = "dev"

// The dev server's client credentials, used when the provider is registered without any. They
// guard nothing (the server is for development and any user name logs in); they are fixed so that
// replicas sharing one dev server (DevOpts.Share) present the same client.
const (
	devClientID     = "dev"
	devClientSecret = "dev-secret"
)

// devPaths are the dev server's endpoints, shaped like a well-known provider's.
var devPaths = oauthserver.Paths{Authorize: "/login/oauth/authorize", Token: "/login/oauth/access_token", UserInfo: "/user"}

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
	// ExampleCallback lets the callback complete one fixed pair, the query DevExampleState and
	// DevExampleCode that an API reference documents as its example, without a login's handshake:
	// it logs in the dev server's user DevExampleUser, so an API explorer's Try it out of the
	// callback (Swagger UI, which cannot follow the login's redirects to the dev server) succeeds
	// with the example as it stands, as often as it is tried. It skips the handshake's check for
	// that pair only, which costs nothing the dev provider protects: its server logs in any name
	// anyway. Development only, like the provider.
	ExampleCallback bool
}

// The example callback of DevOpts.ExampleCallback: the query it completes and the user it logs in.
const (
	DevExampleState = "dev-example-state"
	DevExampleCode  = "dev-example-code"
	DevExampleUser  = "dev-example"
)

// Dev is the development-only provider: an oauthserver on its own port whose login page accepts
// any user name, and the OAuth2Handler that logs in through it. Never enable it in production.
type Dev struct {
	*OAuth2Handler
	base string
	stop context.CancelFunc
	done chan error // nil when the server is another process's (Share)
	once sync.Once
	err  error
	// example is DevOpts.ExampleCallback; emailFn DevOpts.EmailFn.
	example bool
	emailFn func(username string) string
}

// devClient calls the dev OAuth 2.0 server: guarded like every outbound client except that it
// may dial loopback, where the dev server listens.
var devClient = outbound.New(outbound.Options{AllowPrivate: true})

// NewDev starts the dev OAuth 2.0 server (listening at once, so port 0 is resolved) and returns
// the provider. Close stops the server.
func NewDev(p Params, o DevOpts) (*Dev, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if p.Cid == "" && p.Csecret == "" {
		p.Cid, p.Csecret = devClientID, devClientSecret
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil && !(o.Share && o.Port != 0 && errors.Is(err, syscall.EADDRINUSE)) {
		return nil, err
	}
	if p.HTTPClient == nil {
		// The dev server is this process's own (or a replica's) loopback listener, which the guarded
		// default client refuses by design; only the address guard is off, not the caps.
		p.HTTPClient = devClient
	}
	d := &Dev{base: "http://" + addr, example: o.ExampleCallback, emailFn: o.EmailFn}
	if ln != nil {
		d.base = "http://" + ln.Addr().String()
	}
	d.OAuth2Handler = NewOAuth2Handler(p, OAuth2Config{
		Name:     DevName,
		Endpoint: oauth2.Endpoint{AuthURL: d.base + devPaths.Authorize, TokenURL: d.base + devPaths.Token, AuthStyle: oauth2.AuthStyleInHeader},
		Scopes:   []string{"user:name"},
		InfoURL:  d.base + devPaths.UserInfo,
		PKCE:     true,
		MapUser: func(data UserData, _ []byte) token.User {
			return token.User{ID: data.Value("id"), Name: data.Value("name"), Picture: data.Value("picture"), Email: data.Value("email")}
		},
	})
	if ln == nil {
		p.log().Info("dev OAuth2 server: using the one already running (shared by replicas)", "url", d.base)
		return d, nil
	}
	srv, err := oauthserver.New(oauthserver.Options{
		URL:   d.base,
		Paths: devPaths,
		// Only this service's client and callback: the dev server is never an open redirector.
		Clients:       []oauthserver.Client{{ID: p.Cid, Secret: p.Csecret, RedirectURIs: []string{d.conf.RedirectURL}}},
		RequirePKCE:   true,
		WithLoginPage: true,
		AnyUser:       true,
		Authenticate: func(name, _ string) (oauthserver.User, bool) {
			u := oauthserver.User{ID: name, Name: name}
			if o.EmailFn != nil {
				u.Email = o.EmailFn(name)
			}
			return u, true
		},
		Logger: logger.FromSlog(p.log()),
	})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	d.stop, d.done = stop, make(chan error, 1)
	go func() { d.done <- srv.Serve(ctx, ln) }()
	p.log().Info("dev OAuth2 server (development only)", "url", d.base)
	return d, nil
}

// AuthHandler is the callback of OAuth2Handler, which also completes the example pair when
// DevOpts.ExampleCallback is on: a handshake cookie of a login in progress is cleared as any
// callback clears it, and the example user is logged in as the dev server would have answered
// for that name (the e-mail from DevOpts.EmailFn).
func (d *Dev) AuthHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !d.example || q.Get("state") != DevExampleState || q.Get("code") != DevExampleCode || q.Get("error") != "" {
		d.OAuth2Handler.AuthHandler(w, r)
		return
	}
	d.JwtService.ResetHandshake(w)
	u := token.User{ID: DevExampleUser, Name: DevExampleUser}
	if d.emailFn != nil {
		u.Email = d.emailFn(DevExampleUser)
	}
	Finish(w, r, d.Params, DevName, LoginResult{User: u})
}

// URL is the base URL of the dev OAuth 2.0 server.
func (d *Dev) URL() string { return d.base }

// Close stops the dev server (a shared one is left to its owner).
func (d *Dev) Close() error {
	if d.done == nil {
		return nil
	}
	d.once.Do(func() {
		d.stop()
		d.err = <-d.done
	})
	return d.err
}
