// Command authsite is a small web site built on the auth library alone (package
// github.com/triadhq/triad/impl/surfaces/auth and its subpackages): a development OAuth 2.0 login and a
// direct (user/password) login, a home page showing the user and their avatar, and a protected JSON
// route. It is an example to read and to run:
//
//	go run ./examples/authsite              # a free port; the URL is printed
//	go run ./examples/authsite -addr :8090  # a given one
//	go run ./examples/authsite -avatars bolt:///tmp/avatars.db  # avatars kept in that store
//
// Log in with any name through "dev", or as demo / demo-password through the form.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatarstore"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address; port 0 picks a free one")
	devPort := flag.Int("dev-port", 0, "port of the development OAuth 2.0 server; 0 picks a free one")
	avatars := flag.String("avatars", "", "avatar store URI: a directory path or file://, bolt://file.db, mongodb://host/?ava_db=db&ava_coll=coll, postgres://...; empty: a temporary directory removed at exit")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *devPort, *avatars, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves the site on addr until ctx ends, printing its URL to out; avatars is the avatar store's
// URI (empty: a temporary directory).
func run(ctx context.Context, addr string, devPort int, avatars string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s, err := newSite(ctx, "http://"+ln.Addr().String(), devPort, avatars)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer s.Close()
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(out, "authsite at %s (log in with any name through dev, or demo / demo-password)\n", s.url)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// site is the example application: the auth service, the avatar store and the routes.
type site struct {
	http.Handler
	url    string
	svc    *auth.Service
	store  avatar.Store
	avaDir string
}

// newSite wires the library into a plain http.ServeMux, with avatars kept in the store the URI
// avatars names (avatarstore.Open), or in a temporary directory when it is empty.
func newSite(ctx context.Context, url string, devPort int, avatars string) (*site, error) {
	// A real site reads its secret from its configuration; a random one per run means every
	// restart logs everyone out, which suits an example.
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	key := base64.RawURLEncoding.EncodeToString(secret)

	var dir string // the temporary directory to remove at Close, if the site made one
	if avatars == "" {
		var err error
		if dir, err = os.MkdirTemp("", "authsite-avatars-"); err != nil {
			return nil, err
		}
		avatars = dir
	}
	store, err := avatarstore.Open(ctx, avatars, avatarstore.Options{})
	if err != nil {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}
	s := &site{url: url, store: store, avaDir: dir}
	s.svc, err = auth.New(auth.Options{
		SecretReader: token.SecretFunc(func(string) (string, error) { return key, nil }),
		URL:          url,
		AvatarStore:  store,
		// Give the demo user a role, to show ClaimsUpdater and RBAC.
		ClaimsUpdater: token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			if c.User != nil && c.User.Name == "demo" {
				c.User.Role = "member"
			}
			return c
		}),
	})
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.svc.AddDevProvider("127.0.0.1", devPort); err != nil {
		_ = s.Close()
		return nil, err
	}
	err = s.svc.AddDirectProvider("local", provider.CredCheckerFunc(func(user, passwd string) (bool, error) {
		// A real site compares a password hash from its user store.
		return user == "demo" && passwd == "demo-password", nil
	}))
	if err != nil {
		_ = s.Close()
		return nil, err
	}

	authH, avatarH := s.svc.Handlers()
	m := s.svc.Middleware()
	mux := http.NewServeMux()
	mux.Handle("/auth/", authH)
	mux.Handle("/avatar/", avatarH)
	mux.HandleFunc("GET /{$}", s.home)
	mux.Handle("GET /api/me", m.Auth(http.HandlerFunc(s.me)))
	mux.Handle("GET /api/members", m.RBAC("member")(http.HandlerFunc(s.me)))
	s.Handler = mux
	return s, nil
}

// Close stops the dev OAuth 2.0 server, closes the avatar store and removes the temporary one.
func (s *site) Close() error {
	var err error
	if s.svc != nil {
		err = s.svc.Close()
	}
	err = errors.Join(err, s.store.Close())
	if s.avaDir != "" {
		err = errors.Join(err, os.RemoveAll(s.avaDir))
	}
	return err
}

// me is the protected JSON route: the user the Auth middleware put in the request.
func (s *site) me(w http.ResponseWriter, r *http.Request) {
	u := token.MustGetUserInfo(r)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"name": u.Name, "id": u.ID, "picture": u.Picture, "role": u.Role})
}

// home is the page. It learns who is logged in from GET /auth/user, sent with the XSRF header: a
// cookie-borne token is only accepted with that header (a plain page load has none), so the page
// reads the user from a script rather than on the server.
func (s *site) home(w http.ResponseWriter, _ *http.Request) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	n := base64.StdEncoding.EncodeToString(nonce[:])
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; script-src 'nonce-"+n+"'; style-src 'nonce-"+n+"'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	if err := page.Execute(w, map[string]string{"Nonce": n}); err != nil {
		log.Printf("home page: %v", err)
	}
}

var page = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>authsite</title>
<style nonce="{{.Nonce}}">body{font-family:sans-serif;max-width:40em;margin:3em auto}img{border-radius:50%;vertical-align:middle}pre{background:#eee;padding:.5em}[hidden]{display:none}</style></head>
<body>
<h1>authsite</h1>
<p id="user" data-name="?">checking…</p>
<div id="in" hidden>
<p><img id="avatar" width="48" height="48" alt=""> <b id="name"></b> <code id="uid"></code></p>
<p><button id="load-me">GET /api/me</button> <button id="logout">Log out</button></p>
<pre id="me"></pre>
</div>
<div id="out" hidden>
<p><a id="login-dev" href="/auth/dev/login?from=/">Log in with the dev provider</a> (any name)</p>
<form id="direct"><label>user <input id="direct-user" autocomplete="username"></label>
<label>password <input id="direct-passwd" type="password" autocomplete="current-password"></label>
<button id="direct-submit" type="submit">Log in</button> <span id="direct-error"></span></form>
</div>
<script nonce="{{.Nonce}}">
// The JWT cookie is HttpOnly; the XSRF cookie is readable on purpose: requests that rely on the
// cookie copy it into the X-XSRF-TOKEN header, which a cross-site page cannot do.
function xsrf() {
  for (const c of document.cookie.split("; ")) {
    if (c.startsWith("XSRF-TOKEN=")) return decodeURIComponent(c.slice(11));
  }
  return "";
}
const $ = (id) => document.getElementById(id);
async function show() {
  const r = await fetch("/auth/user", {headers: {"X-XSRF-TOKEN": xsrf()}});
  const u = r.ok ? await r.json() : null;
  $("in").hidden = !u;
  $("out").hidden = !!u;
  $("user").textContent = u ? "logged in as " + u.name : "not logged in";
  $("user").dataset.name = u ? u.name : "";
  if (u) {
    $("name").textContent = u.name;
    $("uid").textContent = u.id;
    $("avatar").src = u.picture;
  }
}
$("direct").addEventListener("submit", async (e) => {
  e.preventDefault();
  const r = await fetch("/auth/local/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({user: $("direct-user").value, passwd: $("direct-passwd").value})});
  $("direct-error").textContent = r.ok ? "" : (await r.json()).message;
  show();
});
$("load-me").addEventListener("click", async () => {
  const r = await fetch("/api/me", {headers: {"X-XSRF-TOKEN": xsrf()}});
  $("me").textContent = r.status + " " + await r.text();
});
$("logout").addEventListener("click", async () => {
  await fetch("/auth/logout", {method: "POST"});
  $("me").textContent = "";
  show();
});
show();
</script>
</body></html>`))
