package auth_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func basic(user, pass string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

func bearer(t *testing.T, u token.User) map[string]string {
	c := validClaims("m")
	c.User = &u
	return map[string]string{"X-JWT": forge(t, jwt.SigningMethodHS256, []byte(testSecret), c)}
}

func TestMiddleware_AdminRBACTrace(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.AdminPasswd = "admin-secret"
		o.UserUpdater = middleware.UserUpdFunc(func(u token.User) token.User { u.SetStrAttr("seen", "yes"); return u })
	})
	plainUser := token.User{Name: "p", ID: token.UserID("local", "p")}
	editor := token.User{Name: "e", ID: token.UserID("local", "e"), Role: "editor"}
	attrAdmin := token.User{Name: "a", ID: token.UserID("dev", "a")}
	attrAdmin.SetAdmin(true)

	tests := []struct {
		name, path string
		hdr        map[string]string
		want       int
		wantBody   string
	}{
		{"private anonymous", "/app/private", nil, 401, `"code":"unauthorized"`},
		{"private user", "/app/private", bearer(t, plainUser), 200, `"name":"p"`},
		{"admin anonymous", "/app/admin", nil, 401, `"code":"unauthorized"`},
		{"admin plain user", "/app/admin", bearer(t, plainUser), 403, `"code":"forbidden"`},
		{"admin attr", "/app/admin", bearer(t, attrAdmin), 200, `"name":"a"`},
		{"admin basic", "/app/admin", basic("admin", "admin-secret"), 200, `"role":"admin"`},
		{"admin basic wrong password", "/app/admin", basic("admin", "admin-secreT"), 401, `"code":"unauthorized"`},
		{"admin basic wrong user", "/app/admin", basic("root", "admin-secret"), 401, `"code":"unauthorized"`},
		{"rbac anonymous", "/app/editors", nil, 401, `"code":"unauthorized"`},
		{"rbac no role", "/app/editors", bearer(t, plainUser), 403, `"code":"forbidden"`},
		{"rbac editor", "/app/editors", bearer(t, editor), 200, `"role":"editor"`},
		{"trace anonymous", "/app/trace", nil, 200, "anonymous"},
		{"trace bad token", "/app/trace", map[string]string{"X-JWT": "x.y.z"}, 200, "anonymous"},
		{"trace user updated", "/app/trace", bearer(t, plainUser), 200, `"seen":"yes"`},
	}
	for _, tt := range tests {
		st, h, b := s.do(s.plain, http.MethodGet, tt.path, nil, tt.hdr)
		if st != tt.want || !strings.Contains(string(b), tt.wantBody) {
			t.Errorf("%s: %d %s", tt.name, st, b)
		}
		if st >= 400 && h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: refusal is %s", tt.name, h.Get("Content-Type"))
		}
	}
	// /auth/user accepts basic auth too.
	if st, _, b := s.get("/auth/user", basic("admin", "admin-secret")); st != 200 || !strings.Contains(string(b), `"name":"admin"`) {
		t.Fatalf("user via basic: %d %s", st, b)
	}
}

func TestMiddleware_BasicAuthCheckerWinsOverAdminPasswd(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.AdminPasswd = "admin-secret"
		o.BasicAuthChecker = func(user, passwd string) (bool, token.User, error) {
			if user == "robot" && passwd == "beep" {
				return true, token.User{Name: "robot", ID: "robot", Role: "editor"}, nil
			}
			if user == "broken" {
				return false, token.User{}, errors.New("directory down")
			}
			return false, token.User{}, nil
		}
	})
	tests := []struct {
		name string
		hdr  map[string]string
		path string
		want int
	}{
		{"checker user", basic("robot", "beep"), "/app/editors", 200},
		{"admin password ignored", basic("admin", "admin-secret"), "/app/private", 401},
		{"checker says no", basic("robot", "boop"), "/app/private", 401},
		{"checker error", basic("broken", "x"), "/app/private", 401},
	}
	for _, tt := range tests {
		if st, _, b := s.do(s.plain, http.MethodGet, tt.path, nil, tt.hdr); st != tt.want {
			t.Errorf("%s: %d %s", tt.name, st, b)
		}
	}
}

func TestMiddleware_ValidatorBlocks(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) {
		o.ClaimsUpdater = token.ClaimsUpdFunc(func(c token.Claims) token.Claims {
			c.User.SetBoolAttr("blocked", c.User.Name == "demo")
			return c
		})
		o.Validator = token.ValidatorFunc(func(_ string, c token.Claims) bool { return !c.User.BoolAttr("blocked") })
	})
	s.directLogin("")
	if st, _, _ := s.get("/auth/user", s.xsrf()); st != 401 {
		t.Fatalf("blocked user accepted: %d", st)
	}
	if st, _, b := s.get("/auth/status", s.xsrf()); st != 200 || !strings.Contains(string(b), "not logged in") {
		t.Fatalf("status: %d %s", st, b)
	}
}

// What the embedder's routes answer an authenticated user is marked Cache-Control: no-store by the
// middleware (Auth, Admin, RBAC, and Trace when it finds a user); an anonymous answer is left alone.
func TestMiddleware_AuthenticatedAnswersAreNoStore(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	u := token.User{Name: "p", ID: token.UserID("local", "p"), Role: "editor"}
	for _, path := range []string{"/app/private", "/app/editors", "/app/trace"} {
		if st, h, b := s.do(s.plain, http.MethodGet, path, nil, bearer(t, u)); st != http.StatusOK || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s as a user: %d Cache-Control %q %s, want 200 no-store", path, st, h.Get("Cache-Control"), b)
		}
	}
	if st, h, _ := s.do(s.plain, http.MethodGet, "/app/trace", nil, nil); st != http.StatusOK || h.Get("Cache-Control") != "" {
		t.Errorf("/app/trace anonymous: %d Cache-Control %q, want 200 without", st, h.Get("Cache-Control"))
	}
}
