package main

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/kit/tracing"
	"github.com/triadhq/triad/impl/kit/web"
)

func newLogger(cfg Config) *slog.Logger { return newLoggerTo(os.Stderr, cfg) }

// newLoggerTo logs text in dev (for people) and JSON in prod (for log pipelines).
func newLoggerTo(w io.Writer, cfg Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(cfg.LogLevel)))
	opts := &slog.HandlerOptions{Level: level}
	// Every line logged with a request's context names its request_id and trace_id.
	if cfg.IsDev() {
		return slog.New(web.RequestHandler(slog.NewTextHandler(w, opts)))
	}
	return slog.New(web.RequestHandler(slog.NewJSONHandler(w, opts)))
}

// startTracing starts tracing as the standard OTEL_* variables ask (tracing.FromEnv): nil when
// they leave it off. stop sends the last spans, within a few seconds, when the server stops.
func startTracing(ctx context.Context, log *slog.Logger) (traces *tracing.Tracing, stop func(), err error) {
	traces, err = tracing.FromEnv(ctx)
	if err != nil || traces == nil {
		return nil, func() {}, err
	}
	log.Info("tracing: exporting spans over OTLP/HTTP", "endpoint", cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
	return traces, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := traces.Shutdown(sctx); err != nil {
			log.Warn("tracing: the last spans were not sent", "err", err)
		}
	}, nil
}
