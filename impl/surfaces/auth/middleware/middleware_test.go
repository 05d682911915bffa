package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func newAuth() (*middleware.Authenticator, *token.Service) {
	ts := token.NewService(token.Opts{SecretReader: token.SecretFunc(func(string) (string, error) { return "secret-0123456789abcdef0123", nil })})
	return &middleware.Authenticator{JWTService: ts, ProviderKnown: func(p string) bool { return p == "local" }}, ts
}

func headerToken(t *testing.T, ts *token.Service, u token.User) string {
	t.Helper()
	c, err := ts.Set(httptest.NewRecorder(), token.Claims{User: &u})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func serve(h http.Handler, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddleware_StatusesAndBodies(t *testing.T) {
	a, ts := newAuth()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(token.MustGetUserInfo(r).Name))
	})
	alice := headerToken(t, ts, token.User{Name: "alice", ID: token.UserID("local", "alice"), Role: "editor"})
	ghost := headerToken(t, ts, token.User{Name: "ghost", ID: token.UserID("gone", "ghost")})
	tests := []struct {
		name string
		h    http.Handler
		hdr  map[string]string
		want int
		body string
	}{
		{"auth ok", a.Auth(ok), map[string]string{"X-JWT": alice}, 200, "alice"},
		{"auth none", a.Auth(ok), nil, 401, `{"code":"unauthorized","message":"authentication required"}`},
		{"auth unknown provider", a.Auth(ok), map[string]string{"X-JWT": ghost}, 401, `"unauthorized"`},
		{"rbac ok", a.RBAC("editor")(ok), map[string]string{"X-JWT": alice}, 200, "alice"},
		{"rbac other role", a.RBAC("owner")(ok), map[string]string{"X-JWT": alice}, 403, `{"code":"forbidden","message":"role not permitted"}`},
		{"admin non-admin", a.Admin(ok), map[string]string{"X-JWT": alice}, 403, `"administrator only"`},
	}
	for _, tt := range tests {
		w := serve(tt.h, tt.hdr)
		if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s: %d %s", tt.name, w.Code, w.Body)
		}
		if w.Code >= 400 && w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: content type %q", tt.name, w.Header().Get("Content-Type"))
		}
	}
}

func TestMiddleware_UpdateUserOnlyWithAUser(t *testing.T) {
	a, ts := newAuth()
	a.UserUpdater = middleware.UserUpdFunc(func(u token.User) token.User { u.Name += "!"; return u })
	h := a.Trace(a.UpdateUser(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := token.GetUserInfo(r)
		if err != nil {
			_, _ = w.Write([]byte("anonymous"))
			return
		}
		_, _ = w.Write([]byte(u.Name))
	})))
	if b := serve(h, nil).Body.String(); b != "anonymous" {
		t.Fatalf("anonymous: %q", b)
	}
	tok := headerToken(t, ts, token.User{Name: "bob", ID: token.UserID("local", "bob")})
	if b := serve(h, map[string]string{"X-JWT": tok}).Body.String(); b != "bob!" {
		t.Fatalf("updated: %q", b)
	}
}

// A refresh signs the new token once: the Validator is handed the token the cookie now holds, and
// the secret is read twice (verifying the expired token, signing the new one), not a third time
// to sign the same claims again.
func TestMiddleware_RefreshSignsOnce(t *testing.T) {
	now := time.Now()
	reads := 0
	ts := token.NewService(token.Opts{
		SecretReader: token.SecretFunc(func(string) (string, error) { reads++; return "secret-0123456789abcdef0123", nil }),
		Now:          func() time.Time { return now },
	})
	var seen string
	a := &middleware.Authenticator{JWTService: ts, Validator: token.ValidatorFunc(func(tok string, _ token.Claims) bool { seen = tok; return true })}
	login := httptest.NewRecorder()
	c, err := ts.Set(login, token.Claims{User: &token.User{Name: "carol", ID: token.UserID("local", "carol")}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour) // the token has expired; the cookie lives on
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, ck := range login.Result().Cookies() {
		r.AddCookie(ck)
	}
	r.Header.Set("X-XSRF-TOKEN", c.ID)
	w := httptest.NewRecorder()
	reads = 0
	a.Auth(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })).ServeHTTP(w, r)
	if w.Code != http.StatusNoContent {
		t.Fatalf("refresh: %d %s", w.Code, w.Body)
	}
	var set string
	for _, ck := range w.Result().Cookies() {
		if ck.Name == "JWT" {
			set = ck.Value
		}
	}
	if set == "" || seen != set {
		t.Fatalf("validator saw %q, cookie holds %q", seen, set)
	}
	if reads != 2 {
		t.Fatalf("secret read %d times in a refresh, want 2 (verify, sign once)", reads)
	}
}
