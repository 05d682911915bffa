package tracing

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/triadhq/triad/impl/kit/web"
)

// Middleware starts the server span of every request and ends it once the handler returns, named
// by name(method, route pattern) (the operationId where the spec has one): chi knows the pattern
// only then, so the span is renamed at its end. A caller trusted (given its peer address, before
// any X-Forwarded-For is applied) continues its trace: its traceparent and tracestate make the
// span its child. Anyone else starts a new trace, so a client on the internet can neither join
// a trace nor set its sampling. seen, when not nil, gets the trace id of each request (for its
// log lines). It must sit on the root chi router, outside the routing.
func (t *Tracing) Middleware(trusted func(remoteAddr string) bool, name func(method, pattern string) string,
	seen func(ctx context.Context, traceID string)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if trusted(r.RemoteAddr) {
				ctx = propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
			}
			ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method),
					attribute.String("url.path", r.URL.Path)))
			defer span.End()
			if seen != nil && span.SpanContext().HasTraceID() {
				seen(ctx, span.SpanContext().TraceID().String())
			}
			r = r.WithContext(ctx)
			rec := web.NewStatusWriter(w, r)
			next.ServeHTTP(rec, r)
			pattern := ""
			if rc := chi.RouteContext(ctx); rc != nil {
				pattern = rc.RoutePattern()
			}
			status := rec.Answered() // the access log's and the metrics' status: 499 for a client gone
			span.SetName(name(r.Method, pattern))
			span.SetAttributes(attribute.String("http.route", pattern), attribute.Int("http.response.status_code", status))
			if status >= http.StatusInternalServerError {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		})
	}
}

// Transport makes a client span of every call base sends under a traced request, and sends the
// span's trace context along (traceparent, tracestate). A call outside any trace goes out as it
// is: there is nothing to join and no span to make.
func Transport(base http.RoundTripper) http.RoundTripper { return transport{base} }

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := trace.SpanFromContext(req.Context())
	if !parent.IsRecording() {
		return t.base.RoundTrip(req)
	}
	ctx, span := parent.TracerProvider().Tracer(scope).Start(req.Context(), req.Method+" "+req.URL.Host,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname()), attribute.String("url.path", req.URL.Path)))
	defer span.End()
	req = req.Clone(ctx) // a RoundTripper must not change the request it was given
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, "round trip failed")
	default:
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
		}
	}
	return resp, err
}

// Start starts a child span named name of the span in ctx (a call out that is not HTTP, such as
// sending a mail over SMTP) and returns what ends it with the call's error. Outside any trace it
// starts nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, func(error) {}
	}
	ctx, span := parent.TracerProvider().Tracer(scope).Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "failed")
		}
		span.End()
	}
}
