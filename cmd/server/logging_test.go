package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/kit/web"
)

// TestLogger_RequestLinesNameTheRequest: the server's logger (prod JSON and dev text) names the
// request_id, and the trace_id once traced, on a line logged with a request's context by any code
// (here a library's line through a logger derived from the server's), not only on the access log.
func TestLogger_RequestLinesNameTheRequest(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"prod", "dev"} {
		var buf bytes.Buffer
		log := newLoggerTo(&buf, Config{Mode: mode, LogLevel: "info"}).With("surface", "auth")
		h := web.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			web.SetTraceID(r.Context(), "4bf92f3577b34da6a3ce929d0e0e4736")
			log.WarnContext(r.Context(), "login: exchange", "provider", "github")
		}))
		req := httptest.NewRequest(http.MethodGet, "/auth/github/callback", nil)
		req.Header.Set(web.RequestIDHeader, "abc-123")
		h.ServeHTTP(httptest.NewRecorder(), req)
		line := strings.TrimSpace(buf.String())
		if mode == "prod" {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["request_id"] != "abc-123" ||
				m["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || m["surface"] != "auth" {
				t.Errorf("prod line %s (%v): want request_id, trace_id and surface", line, err)
			}
			continue
		}
		if !strings.Contains(line, "request_id=abc-123") || !strings.Contains(line, "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") {
			t.Errorf("dev line %q: want request_id and trace_id", line)
		}
	}
}
