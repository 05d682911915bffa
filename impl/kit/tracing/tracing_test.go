package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestEnabled_FollowsTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		on   bool
		bad  bool
	}{
		{"nothing set", nil, false, false},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, false},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true, false},
		{"otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{"none beats an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, false},
		{"zipkin is refused", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
		{"grpc is refused", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, true},
		{"http/protobuf for traces wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, false},
	} {
		on, err := Enabled(func(k string) string { return c.env[k] })
		if on != c.on || (err != nil) != c.bad {
			t.Errorf("%s: on %v err %v, want on %v error %v", c.name, on, err, c.on, c.bad)
		}
	}
}

// traced serves a chi route through Middleware with an in-memory exporter; handler runs inside.
func traced(t *testing.T, trusted bool, handler http.HandlerFunc) (*httptest.Server, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	p := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	tr := &Tracing{provider: p, tracer: p.Tracer(scope)}
	r := chi.NewRouter()
	r.Use(tr.Middleware(func(string) bool { return trusted }, func(m, p string) string { return m + " " + p }, nil))
	r.Get("/things/{id}", handler)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, exp
}

const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

func getWithTraceparent(t *testing.T, url string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestMiddleware_TrustedCallerContinuesItsTrace(t *testing.T) {
	srv, exp := traced(t, true, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	getWithTraceparent(t, srv.URL+"/things/42")
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "GET /things/{id}" || s.SpanKind != trace.SpanKindServer || s.SpanContext.TraceID().String() != callerTrace ||
		s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("span %q kind %v trace %s parent %s", s.Name, s.SpanKind, s.SpanContext.TraceID(), s.Parent.SpanID())
	}
}

func TestMiddleware_UntrustedCallerStartsANewTrace(t *testing.T) {
	srv, exp := traced(t, false, func(w http.ResponseWriter, r *http.Request) {})
	getWithTraceparent(t, srv.URL+"/things/42")
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	if s := spans[0]; s.SpanContext.TraceID().String() == callerTrace || s.Parent.IsValid() {
		t.Fatalf("an untrusted caller's traceparent was followed: trace %s parent %s", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
}

// An outbound call made while serving carries the request's trace to the peer, as a child span.
func TestTransport_PropagatesTheTrace(t *testing.T) {
	got := make(chan string, 1)
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	defer peer.Close()
	client := &http.Client{Transport: Transport(http.DefaultTransport)}
	srv, exp := traced(t, true, func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, peer.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	})
	getWithTraceparent(t, srv.URL+"/things/1")
	tp := <-got
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].SpanKind != trace.SpanKindClient {
		t.Fatalf("spans %v, want a client span and the server span", spans)
	}
	want := "00-" + callerTrace + "-" + spans[0].SpanContext.SpanID().String() + "-01"
	if tp != want {
		t.Fatalf("peer got traceparent %q, want %q", tp, want)
	}
	// Outside a trace the call goes out untouched.
	resp, err := client.Get(peer.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tp := <-got; tp != "" {
		t.Fatalf("an untraced call sent traceparent %q", tp)
	}
}

func TestStatementName(t *testing.T) {
	for sql, want := range map[string]string{
		"-- name: CreateOrder :one\nINSERT INTO orders ...": "CreateOrder",
		"begin":      "BEGIN",
		"  select 1": "SELECT",
		"COMMIT;":    "COMMIT",
	} {
		if got := statementName(sql); got != want {
			t.Errorf("statementName(%q) = %q, want %q", sql, got, want)
		}
	}
}
