package router

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNew_SharedStack: every route of the root gets request ids, the body limit, JSON 404/405 and
// the extra layers, in the order given.
func TestNew_SharedStack(t *testing.T) {
	var order []string
	layer := func(name string) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				order = append(order, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	r := New(Options{BodyLimit: 8, Middleware: []func(http.Handler) http.Handler{layer("screen"), layer("cors")}})
	r.Post("/x", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })

	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/x", "small", 204},
		{"POST", "/x", "far too large", 413},
		{"GET", "/x", "", 405},
		{"GET", "/nowhere", "", 404},
	} {
		order = nil
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if w.Code != tc.status || w.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s %s: %d, request id %q", tc.method, tc.path, w.Code, w.Header().Get("X-Request-Id"))
		}
		if tc.status >= 400 && w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: not the JSON error body", tc.method, tc.path)
		}
		if tc.status != 413 && strings.Join(order, ",") != "screen,cors" {
			t.Errorf("%s %s: layers ran as %v", tc.method, tc.path, order)
		}
	}
}
