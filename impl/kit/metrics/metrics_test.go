package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestObserve_CardinalityStaysBounded: whatever paths, methods, statuses and refusal codes the
// requests bring (ids in paths, made-up verbs, codes no handler has), the request series stay
// within the operations times a bounded set of methods, statuses and codes.
func TestObserve_CardinalityStaysBounded(t *testing.T) {
	m := New()
	for i := range 5000 {
		pattern := []string{"", "/orders/{id}/take", "/healthz", "/auth/*"}[i%4]
		method := []string{"GET", "POST", "BREW" + strconv.Itoa(i), "PATCH"}[i%4]
		code := "code_" + strconv.Itoa(i) // every request a new code: the worst a handler could do
		if i%3 == 0 {
			code = "Not A Word " + strconv.Itoa(i)
		}
		m.Observe(method, pattern, 100+i%700, code, time.Millisecond)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	series := map[string]int{}
	codes := map[string]bool{}
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		name, labels, ok := strings.Cut(l, "{")
		if !ok || !strings.HasPrefix(name, "triad_http_request") {
			continue
		}
		series[name]++
		if strings.HasPrefix(name, "triad_http_requests_total") {
			c := labels[strings.Index(labels, `code="`)+6:]
			codes[c[:strings.IndexByte(c, '"')]] = true
		}
	}
	// 3 operations (unmatched, takeOrder's pattern, /healthz) x 4 methods (other included) x 501
	// statuses (100-599, other) x 101 codes is the ceiling; what matters is that it does not grow
	// with the requests: 5000 distinct codes became at most maxCodes+1.
	if len(codes) > maxCodes+1 {
		t.Errorf("%d distinct code labels, want at most %d", len(codes), maxCodes+1)
	}
	if !codes[OtherCode] {
		t.Error("codes past the bound, or not words, are not counted as other")
	}
	if n := series["triad_http_requests_total"]; n > 5000/2 {
		t.Errorf("%d request series for 5000 requests: the labels follow the requests", n)
	}
	// The histogram has no code and only the status class: its series are operations x methods x 6.
	if n := series["triad_http_request_duration_seconds_count"]; n > 3*4*6 {
		t.Errorf("%d duration series, want at most %d", n, 3*4*6)
	}
}

// TestEventsAndSweeps: an Events' series exist at 0 from the start, count only the events named,
// and a sweep's runs, rows and last success are counted; a run cut short by the stop is no failure.
func TestEventsAndSweeps(t *testing.T) {
	m := New()
	ev := m.Events("triad_test_events_total", "test", "event", "created", "expired")
	ev.Add("expired", 3)
	ev.Add("invented", 1)
	m.Swept("stale things", 2, time.Now(), nil)
	m.Swept("stale things", 0, time.Now(), errors.New("boom"))
	m.Swept("stale things", 0, time.Now(), fmt.Errorf("stopping: %w", context.Canceled))
	var none *Registry
	none.Events("x", "x", "x", "a").Add("a", 1) // a surface mounted without metrics counts nothing
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`triad_test_events_total{event="created"} 0`, `triad_test_events_total{event="expired"} 3`,
		`triad_sweep_runs_total{result="ok",sweep="stale things"} 1`, `triad_sweep_runs_total{result="error",sweep="stale things"} 1`,
		`triad_sweep_rows_total{sweep="stale things"} 2`, `triad_sweep_last_success_timestamp_seconds{sweep="stale things"} 1.`} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, "invented") {
		t.Error("an event not named at the start was counted")
	}
}
