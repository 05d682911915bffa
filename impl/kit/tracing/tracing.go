// Package tracing is the server's OpenTelemetry tracing: a span per request named by its
// operationId (Middleware), a child span per SQL statement (QueryTracer) and per outbound HTTP call
// (Transport) or other call out (Start), W3C trace context (traceparent, tracestate) taken from
// trusted callers and sent on outbound calls. It is configured by the standard OTEL_* variables
// alone (FromEnv) and exports over OTLP/HTTP; left unset it is off, and off costs nothing: no
// middleware is installed and no tracer is set on the pools.
//
// Child spans come from the tracer provider of the span already in the context, so nothing here is
// global: a request that no Middleware traced, or a background job, makes no spans at all.
package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every span the server makes.
const scope = "github.com/triadhq/triad"

// DefaultServiceName is the service.name of the spans when OTEL_SERVICE_NAME (or service.name in
// OTEL_RESOURCE_ATTRIBUTES) does not name one.
const DefaultServiceName = "triad"

// Tracing is tracing switched on: the provider whose spans the OTLP exporter sends.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// propagator reads and writes W3C trace context: the traceparent and tracestate headers.
var propagator = propagation.TraceContext{}

// Enabled reads the standard variables through getenv and says whether traces are to be exported:
// OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none, turns them off; OTEL_TRACES_EXPORTER=otlp
// turns them on; unset, an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) turns them on. An exporter or protocol this server does not
// ship (zipkin, console, grpc) is an error, not a silent fallback.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	on := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch e := getenv("OTEL_TRACES_EXPORTER"); e {
	case "":
	case "none":
		return false, nil
	case "otlp":
		on = true
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: this server exports traces over otlp only (or none)", e)
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: this server exports OTLP over http/protobuf only", k, p)
			}
			break // the traces-specific one wins
		}
	}
	return on, nil
}

// FromEnv starts tracing as the standard variables ask (Enabled): nil when they leave it off. The
// exporter reads its endpoint, headers, timeout and TLS from the OTEL_EXPORTER_OTLP_* variables,
// the sampler comes from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default: follow the
// caller's decision, else sample everything), the batching from OTEL_BSP_*, the service name from
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES (default DefaultServiceName). All of them are
// read from the process's environment, where the SDK reads them.
func FromEnv(ctx context.Context) (*Tracing, error) {
	on, err := Enabled(os.Getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res := resource.Default() // the SDK's, with the environment's attributes
	if os.Getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		if res, err = resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", DefaultServiceName))); err != nil {
			return nil, fmt.Errorf("trace resource: %w", err)
		}
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{provider: p, tracer: p.Tracer(scope)}, nil
}

// Shutdown sends the spans still batched and stops the exporter; a nil Tracing has nothing to do.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}
