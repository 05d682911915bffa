package web

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestAccessLog_RoutePatternAtLevel: one line per request at the given level, naming the route
// pattern rather than the raw path (which carries ids).
func TestAccessLog_RoutePatternAtLevel(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := chi.NewRouter()
	r.Use(WithRequestID, AccessLog(log, slog.LevelInfo))
	r.Get("/orders/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	req := httptest.NewRequest(http.MethodGet, "/orders/424242", nil)
	req.RemoteAddr = "192.0.2.7:5555"
	r.ServeHTTP(httptest.NewRecorder(), req)

	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("want one JSON line, got %q: %v", buf.String(), err)
	}
	want := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "/orders/{id}",
		"status": float64(http.StatusTeapot), "client": "192.0.2.7:5555"}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v", k, line[k], v)
		}
	}
	if id, _ := line["request_id"].(string); id == "" {
		t.Error("no request_id")
	}
	if bytes.Contains(buf.Bytes(), []byte("424242")) {
		t.Error("the raw path is logged")
	}

	buf.Reset()
	quiet := chi.NewRouter()
	quiet.Use(AccessLog(log, slog.LevelDebug))
	quiet.Get("/x", func(http.ResponseWriter, *http.Request) {})
	quiet.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	if buf.Len() != 0 {
		t.Errorf("a debug-level access log wrote at info: %q", buf.String())
	}
}

// TestAccessLog_User: the line names the user an authentication layer inside it recorded with
// SetUser, with or without WithRequestID in front; an anonymous request's line has no user field.
func TestAccessLog_User(t *testing.T) {
	for _, tc := range []struct {
		name      string
		requestID bool
		user      string
	}{
		{"authenticated", true, "42"},
		{"authenticated without request ids", false, "ada"},
		{"anonymous", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, nil))
			r := chi.NewRouter()
			if tc.requestID {
				r.Use(WithRequestID)
			}
			r.Use(AccessLog(log, slog.LevelInfo))
			r.Use(func(next http.Handler) http.Handler { // an authentication middleware
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tc.user != "" {
						SetUser(r.Context(), tc.user)
					}
					next.ServeHTTP(w, r)
				})
			})
			r.Get("/x", func(http.ResponseWriter, *http.Request) {})
			r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("want one JSON line, got %q: %v", buf.String(), err)
			}
			user, has := line["user"]
			if tc.user == "" && has || tc.user != "" && user != tc.user {
				t.Fatalf("user = %v (present %v), want %q", user, has, tc.user)
			}
		})
	}
}

// TestAccessLog_ClientGone: a request whose client left before anything was written is logged
// with 499, not as a 200 it never got.
func TestAccessLog_ClientGone(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := AccessLog(log, slog.LevelInfo)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx))
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["status"] != float64(StatusClientGone) {
		t.Fatalf("status = %v, want 499", line["status"])
	}
}
