package router

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
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

// TestStandalone_OneSurfaceOnTheSharedStack: a surface served alone gets the root's shared
// answers around its own routes, and a surface that cannot mount yields no handler.
func TestStandalone_OneSurfaceOnTheSharedStack(t *testing.T) {
	h, err := Standalone(nil, func(r chi.Router) error {
		r.Get("/ping", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/ping", 204},
		{"POST", "/ping", 405},
		{"GET", "/nowhere", 404},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || w.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s %s: %d, request id %q", tc.method, tc.path, w.Code, w.Header().Get("X-Request-Id"))
		}
	}

	broken := errors.New("spec does not load")
	if h, err := Standalone(nil, func(chi.Router) error { return broken }); !errors.Is(err, broken) || h != nil {
		t.Errorf("mount error: handler %v, err %v", h, err)
	}
}
