package tracing

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkMiddleware is what tracing costs a request when it is on (every request sampled, its
// span handed to a processor that drops it), against the same router without it served in turn.
// Off, the server installs no middleware at all, so off costs nothing to measure.
func BenchmarkMiddleware(b *testing.B) {
	p := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer func() { _ = p.Shutdown(b.Context()) }()
	tr := &Tracing{provider: p, tracer: p.Tracer(scope)}
	route := func(traced bool) http.Handler {
		r := chi.NewRouter()
		if traced {
			r.Use(tr.Middleware(func(string) bool { return false }, func(m, p string) string { return p }, nil))
		}
		r.Get("/orders/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
		return r
	}
	bare, traced := route(false), route(true)
	req := httptest.NewRequest(http.MethodGet, "/orders/42", nil)
	var base, ours time.Duration
	for b.Loop() {
		t0 := time.Now()
		bare.ServeHTTP(httptest.NewRecorder(), req)
		t1 := time.Now()
		traced.ServeHTTP(httptest.NewRecorder(), req)
		ours += time.Since(t1)
		base += t1.Sub(t0)
	}
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "baseline-ns/op")
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "traced-ns/op")
}
