package tracing

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// QueryTracer makes a child span of every SQL statement run under a traced request (pgx's
// QueryTracer: one span from the statement's start to its end, a query's end being when its rows
// close). The span carries the statement's text, never its arguments, which hold personal data and
// secrets. A statement outside any trace (a sweep, the listener) makes none.
type QueryTracer struct{}

type querySpanKey struct{}

// TraceQueryStart starts the statement's span.
func (QueryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx
	}
	ctx, span := parent.TracerProvider().Tracer(scope).Start(ctx, statementName(data.SQL),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql"), attribute.String("db.query.text", data.SQL)))
	return context.WithValue(ctx, querySpanKey{}, span)
}

// TraceQueryEnd ends it, marking a failed statement.
func (QueryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	span, ok := ctx.Value(querySpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if data.Err != nil {
		span.RecordError(data.Err)
		span.SetStatus(codes.Error, "statement failed")
	} else {
		span.SetAttributes(attribute.Int64("db.response.returned_rows", data.CommandTag.RowsAffected()))
	}
	span.End()
}

// statementName is a statement's span name: sqlc's "-- name: CreateOrder :one" when the statement
// carries it, else its first word (SELECT, BEGIN, COMMIT).
func statementName(sql string) string {
	s := strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(s, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok {
			return name
		}
	}
	if i := strings.IndexAny(s, " \n\t;"); i > 0 {
		s = s[:i]
	}
	return strings.ToUpper(s)
}
