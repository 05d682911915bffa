package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkSharedStack measures the middleware every request passes through (request id, the
// request's logger, panic recovery, access log at info level, body limit) against the bare handler in the same run.
func BenchmarkSharedStack(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	stacked := WithRequestID(WithLogger(log)(Recover(AccessLog(log, slog.LevelDebug)(LimitBody(1 << 20)(bare)))))
	measure := func(h http.Handler) float64 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		start := time.Now()
		n := 0
		for time.Since(start) < 200*time.Millisecond || n < 1000 {
			h.ServeHTTP(httptest.NewRecorder(), req)
			n++
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	base := measure(bare)
	b.ResetTimer()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	for b.Loop() {
		stacked.ServeHTTP(httptest.NewRecorder(), req)
	}
	b.StopTimer()
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(base, "baseline-ns/op")
	b.ReportMetric(ours/base, "x-baseline")
}

// BenchmarkRequestHandler measures the shared stack with its access log at info (prod) written
// through RequestHandler, which names each line's request and trace ids, against the same stack
// over the bare JSON handler, the two served in turn so that a busy machine slows both alike: the
// price of ids on every line with tracing off.
func BenchmarkRequestHandler(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	stack := func(h slog.Handler) http.Handler {
		log := slog.New(h)
		return WithRequestID(WithLogger(log)(AccessLog(log, slog.LevelInfo)(bare)))
	}
	plain := stack(slog.NewJSONHandler(io.Discard, nil))
	named := stack(RequestHandler(slog.NewJSONHandler(io.Discard, nil)))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	var base, ours time.Duration
	for b.Loop() {
		t0 := time.Now()
		plain.ServeHTTP(httptest.NewRecorder(), req)
		t1 := time.Now()
		named.ServeHTTP(httptest.NewRecorder(), req)
		ours += time.Since(t1)
		base += t1.Sub(t0)
	}
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(float64(ours)/float64(base), "x-baseline")
}
