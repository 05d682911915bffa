package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/triadhq/triad/api"
)

// TestOperationAndSurface: the surface label comes from the specs in api/, each route to the
// surface whose spec has paths under its first segment.
func TestOperationAndSurface(t *testing.T) {
	m := New()
	for _, name := range api.Names() {
		spec, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		m.NameOperations(name, spec)
	}
	tests := []struct{ pattern, op, surface string }{
		{"/orders/{id}/take", "/orders/{id}/take", "orders"},
		{"/oauth/token", "/oauth/token", "orders"},
		{"/api/brands/{id}", "/api/brands/{id}", "brands"},
		{"/auth/*", Unmatched, Unmatched}, // a mounted router's catch-all is not a route
		{"/avatar/{id}", "/avatar/{id}", "auth"},
		{"/healthz", "/healthz", Platform},
		{"", Unmatched, Unmatched},
	}
	for _, tt := range tests {
		op := Operation(tt.pattern)
		if op != tt.op || m.Surface(op) != tt.surface {
			t.Errorf("%q: operation %q surface %q, want %q %q", tt.pattern, op, m.Surface(op), tt.op, tt.surface)
		}
	}
}

// TestWatchConflicts: the conflicts a pool's tracer counted are served by reason at each scrape.
func TestWatchConflicts(t *testing.T) {
	m := New()
	deadlocks, serialization := int64(0), int64(0)
	m.WatchConflicts(func() (int64, int64) { return deadlocks, serialization })
	deadlocks, serialization = 3, 5
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{`triad_db_conflicts_total{reason="deadlock"} 3`, `triad_db_conflicts_total{reason="serialization_failure"} 5`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
