package auth_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// TestHandlers_MountAnywhere: the two handlers answer the same whether the application mounts them
// with chi's Mount, behind http.StripPrefix, or as they come on a plain http.ServeMux at "/auth/"
// and "/avatar/" (which hands them the full path). Each style logs in through the direct provider
// and through the dev provider's OAuth round trip (its callback URL is derived from AuthPath), reads
// the user back, fetches the avatar and gets the JSON 404 for an unknown route.
func TestHandlers_MountAnywhere(t *testing.T) {
	t.Parallel()
	mounts := map[string]func(authH, avatarH, app http.Handler) http.Handler{
		"servemux": func(authH, avatarH, app http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/auth/", authH)
			mux.Handle("/avatar/", avatarH)
			mux.Handle("/app/", app)
			return mux
		},
		"chi-mount": func(authH, avatarH, app http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Mount("/auth", authH)
			r.Mount("/avatar", avatarH)
			r.Handle("/app/*", app)
			return r
		},
		"strip-prefix": func(authH, avatarH, app http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/auth/", http.StripPrefix("/auth", authH))
			mux.Handle("/avatar/", http.StripPrefix("/avatar", avatarH))
			mux.Handle("/app/", app)
			return mux
		},
		"chi-handle-wildcard": func(authH, avatarH, app http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Handle("/auth/*", authH)
			r.Handle("/avatar/*", avatarH)
			r.Handle("/app/*", app)
			return r
		},
	}
	for name, mount := range mounts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, err := filestore.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			var h http.Handler
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
			t.Cleanup(srv.Close)
			svc, err := auth.New(auth.Options{
				SecretReader: token.SecretFunc(func(string) (string, error) { return testSecret, nil }),
				URL:          srv.URL, AvatarStore: store,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = svc.Close() })
			if err := svc.AddDevProvider("", 0); err != nil {
				t.Fatal(err)
			}
			if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(func(u, p string) (bool, error) {
				return u == "demo" && p == "demo-password", nil
			})); err != nil {
				t.Fatal(err)
			}
			authH, avatarH := svc.Handlers()
			app := svc.Middleware().Auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "hello "+token.MustGetUserInfo(r).Name)
			}))
			h = mount(authH, avatarH, app)

			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			get := func(path string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				u, _ := url.Parse(srv.URL)
				for _, ck := range jar.Cookies(u) {
					if ck.Name == token.DefaultXSRFCookieName {
						req.Header.Set(token.DefaultXSRFHeaderKey, ck.Value)
					}
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}

			if st, b := get("/auth/list"); st != 200 || b != `["dev","local"]`+"\n" {
				t.Fatalf("list: %d %q", st, b)
			}
			if st, b := get("/auth/nope/nope/nope"); st != 404 || !strings.Contains(b, `"code":"not_found"`) {
				t.Fatalf("unknown route: %d %s", st, b)
			}
			resp, err := c.Post(srv.URL+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"demo"`) {
				t.Fatalf("direct login: %d %s", resp.StatusCode, body)
			}
			if st, b := get("/app/private"); st != 200 || b != "hello demo" {
				t.Fatalf("protected route: %d %q", st, b)
			}
			var u token.User
			st, b := get("/auth/user")
			if st != 200 {
				t.Fatalf("user: %d %s", st, b)
			}
			mustJSON(t, []byte(b), &u)
			if !strings.HasPrefix(u.Picture, srv.URL+"/avatar/") {
				t.Fatalf("picture %q", u.Picture)
			}
			if st, b := get(strings.TrimPrefix(u.Picture, srv.URL)); st != 200 || !strings.HasPrefix(b, "\x89PNG") {
				t.Fatalf("avatar: %d", st)
			}
			if st, _ := get("/avatar/" + strings.Repeat("0", 40) + ".image"); st != 404 {
				t.Fatalf("unknown avatar: %d", st)
			}

			// The dev OAuth round trip: login redirects to the dev server, whose approval comes
			// back to <URL>/auth/dev/callback, which must reach the handler in every style.
			if st, b := get("/auth/logout"); st != 200 {
				t.Fatalf("logout: %d %s", st, b)
			}
			devLoginByForm(t, c, srv.URL, "mounted")
			if st, b := get("/app/private"); st != 200 || b != "hello mounted" {
				t.Fatalf("after dev login: %d %q", st, b)
			}
		})
	}
}

// devLoginByForm walks the dev flow with c: login → dev page (GET) → form POST → callback.
func devLoginByForm(t *testing.T, c *http.Client, base, username string) {
	t.Helper()
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := nc.Get(base + "/auth/dev/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("dev login: %d", resp.StatusCode)
	}
	authURL, _ := url.Parse(resp.Header.Get("Location"))
	q := authURL.Query()
	form := url.Values{"username": {username}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	resp, err = nc.PostForm(authURL.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("dev authorize: %d", resp.StatusCode)
	}
	resp, err = nc.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"`+username+`"`) {
		t.Fatalf("dev callback: %d %s", resp.StatusCode, b)
	}
}

// TestAddCustomHandler_RefusesAuthPathName: a provider named like a one-segment AuthPath would make
// /auth/login ambiguous for the self-stripping handler, so the name is refused.
func TestAddCustomHandler_RefusesAuthPathName(t *testing.T) {
	t.Parallel()
	svc, err := auth.New(auth.Options{SecretReader: token.SecretFunc(func(string) (string, error) { return testSecret, nil }), URL: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.AddDirectProvider("auth", provider.CredCheckerFunc(func(string, string) (bool, error) { return true, nil }))
	if err == nil {
		t.Fatal("provider named auth accepted")
	}
}
