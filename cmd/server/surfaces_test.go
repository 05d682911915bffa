package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestSurfaces_EverySpecIsMounted: every spec in api/ is a surface this server mounts, publishes
// at /openapi, lists in /docs and labels in its metrics, and every surface mounted has a spec. A
// spec copied into api/ without its registration line fails here, naming the line.
func TestSurfaces_EverySpecIsMounted(t *testing.T) {
	var mounted []string
	for _, s := range surfaces {
		mounted = append(mounted, s.name)
	}
	for _, name := range api.Names() {
		if !slices.Contains(mounted, name) {
			t.Errorf("api/%s.yaml has no surface in cmd/server: add its registration line to surfaces in cmd/server/surfaces.go (docs/adding-a-surface.md)", name)
		}
	}
	for _, name := range mounted {
		if !slices.Contains(api.Names(), name) {
			t.Errorf("cmd/server mounts surface %q, which has no api/%s.yaml", name, name)
		}
	}
	if got := len(specNames); got != len(api.Names()) {
		t.Errorf("/openapi publishes %d documents, api/ holds %d", got, len(api.Names()))
	}
	urls := swaggerURLs()
	specs, err := publishedSpecs()
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	for i, name := range specNames {
		m.NameOperations(name, specs[i])
	}
	for i, name := range specNames {
		if !strings.Contains(urls, `"/openapi/`+name+`.yaml"`) {
			t.Errorf("/docs does not list %s: %s", name, urls)
		}
		for path := range specs[i].Paths.Map() {
			if got := m.Surface(path); got != name {
				t.Errorf("metrics label %s of api/%s.yaml surface %q, want %q (two specs share its first path segment?)", path, name, got, name)
			}
		}
	}
}

// whoami is a kit surface used by the tests below: GET /test/whoami answers the caller a token of
// source names.
func whoami(source string) surface {
	return kitSurface("whoami", func(d kit.Deps, r chi.Router) error {
		auth := bearer.New(d.Tokens.Use("whoami", source), bearer.Options[kit.Caller]{Realm: "whoami"})
		r.With(auth.Middleware).Get("/test/whoami", func(w http.ResponseWriter, r *http.Request) {
			c, _ := bearer.From[kit.Caller](r.Context())
			web.WriteJSON(w, http.StatusOK, c)
		})
		return nil
	})
}

// TestSurfaces_TokenSourcesByName: a surface accepts another's tokens by the source's name, even
// when it is mounted before the surface that provides them (here first, ahead of brands), and a
// name no surface provides stops the server at start-up, naming it. Not parallel: it changes the
// package's surface list for its own servers.
func TestSurfaces_TokenSourcesByName(t *testing.T) {
	saved := surfaces
	t.Cleanup(func() { surfaces = saved })
	surfaces = append([]surface{whoami("brands")}, saved...)
	base, stop := routerServer(t, "-database-url", dbtest.NewURL(t))
	resp, err := http.PostForm(base+"/api/user/register", url.Values{"name": {"Kit"}, "email": {"kit@example.com"}, "password": {"kit-password-1"}})
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ID    string `json:"_id"`
		Token string `json:"token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if err != nil || reg.Token == "" {
		t.Fatalf("register: %d %v", resp.StatusCode, err)
	}
	ask := func(tok string) (int, kit.Caller) {
		req, _ := http.NewRequest(http.MethodGet, base+"/test/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c kit.Caller
		_ = json.NewDecoder(resp.Body).Decode(&c)
		return resp.StatusCode, c
	}
	if status, c := ask(reg.Token); status != http.StatusOK || c != (kit.Caller{Source: "brands", UserID: reg.ID, Role: "user"}) {
		t.Fatalf("a brands token: %d %+v, want 200 and the brands user %s", status, c, reg.ID)
	}
	if status, _ := ask("not-a-token"); status != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d, want 401", status)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	surfaces = append([]surface{whoami("brnads")}, saved...)
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-log-level", "warn", "-database-url", dbtest.NewURL(t)}, nil)
	if err == nil || !strings.Contains(err.Error(), `"brnads" (used by whoami)`) {
		t.Fatalf("a surface using an unknown source: run = %v, want a start-up error naming it", err)
	}
}

// TestSurfaces_AuthJWTIsATokenSource: the auth service's JWT is the token source "auth": a surface
// that uses it by name accepts a token of a direct login (as the auth middleware would, its user
// and role), and refuses it once the session is ended by a logout, as every auth route does. Not
// parallel: it changes the package's surface list for its own server.
func TestSurfaces_AuthJWTIsATokenSource(t *testing.T) {
	saved := surfaces
	t.Cleanup(func() { surfaces = saved })
	surfaces = append([]surface{whoami("auth")}, saved...)
	base, _ := routerServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t), "-auth-dev-port", "0")

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Post(base+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var jwt, xsrf string
	for _, c := range resp.Cookies() {
		switch c.Name {
		case "JWT":
			jwt = c.Value
		case "XSRF-TOKEN":
			xsrf = c.Value
		}
	}
	if resp.StatusCode != http.StatusOK || jwt == "" {
		t.Fatalf("login: %d, JWT %q", resp.StatusCode, jwt)
	}
	ask := func(tok string) (int, kit.Caller) {
		req, _ := http.NewRequest(http.MethodGet, base+"/test/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c kit.Caller
		_ = json.NewDecoder(resp.Body).Decode(&c)
		return resp.StatusCode, c
	}
	if status, c := ask(jwt); status != http.StatusOK || c.Source != "auth" || c.UserID == "" || c.Role != "user" {
		t.Fatalf("the demo user's JWT: %d %+v, want 200 and an auth user with the role user", status, c)
	}
	if status, _ := ask(jwt + "x"); status != http.StatusUnauthorized {
		t.Fatalf("a JWT with a broken signature: %d, want 401", status)
	}

	req, _ := http.NewRequest(http.MethodPost, base+"/auth/logout", nil)
	req.Header.Set("X-XSRF-TOKEN", xsrf)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if status, _ := ask(jwt); status != http.StatusUnauthorized {
		t.Fatalf("the JWT after its logout: %d, want 401", status)
	}
}
