package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
)

type ctxKey int

const requestInfoKey ctxKey = iota

// requestInfo is what the shared middleware keep about a request in its context, in one value (one
// allocation per request): the id WithRequestID gives it, and the slot for the authenticated user
// that authentication middleware fill (SetUser) and AccessLog reads once the handler has returned.
// The slot is a pointer's target rather than a context value of its own because the middleware
// that learns the user runs inside the access log and cannot hand a new context back out.
type requestInfo struct {
	id   string
	user string
	// log is the request's logger (WithLogger); nil means slog.Default().
	log *slog.Logger
	// failureLogged is set once Internal has logged the request's failure with its id.
	failureLogged bool
	// traceID is the id of the request's trace (SetTraceID), "" when it is not traced.
	traceID string
	// code is the refusal code the request was answered with (RefusalCode).
	code string
}

func info(ctx context.Context) *requestInfo {
	i, _ := ctx.Value(requestInfoKey).(*requestInfo)
	return i
}

// RequestID returns the id the RequestID middleware gave the request, or "".
func RequestID(ctx context.Context) string {
	if i := info(ctx); i != nil {
		return i.id
	}
	return ""
}

// SetUser records id as the authenticated user of the request, for its access log line. The
// authentication middleware of each surface call it once they have resolved a caller; outside
// WithRequestID or AccessLog it does nothing. Like the rest of a request's handling it must be
// called before the handler returns, from the request's goroutine.
func SetUser(ctx context.Context, id string) {
	if i := info(ctx); i != nil {
		i.user = id
	}
}

// SetTraceID records id as the trace id of the request, so its log lines name it (trace_id, see
// RequestHandler). The tracing middleware calls it; outside WithRequestID it does nothing.
func SetTraceID(ctx context.Context, id string) {
	if i := info(ctx); i != nil {
		i.traceID = id
	}
}

// RequestIDHeader carries a request's id both ways on every route (WithRequestID); the specs do
// not declare it per operation, so the CORS policy adds it to what it allows and exposes.
const RequestIDHeader = "X-Request-Id"

// WithRequestID gives every request an id: the caller's X-Request-Id when it is a sane token,
// otherwise a fresh random one. The id is echoed in the response header. A request that already
// has an id (a WithRequestID further out) keeps it.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := info(r.Context()); i != nil && i.id != "" {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get(RequestIDHeader)
		if !saneID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		if i := info(r.Context()); i != nil {
			i.id = id // a slot made further out (AccessLog, WithLogger) without an id
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestInfoKey, &requestInfo{id: id})))
	})
}

// saneID accepts short printable ids only, so a caller cannot inject text into logs.
func saneID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Recover turns a panic into a stack trace logged on the request's logger (WithLogger) and a JSON
// 500 that reveals nothing.
func Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				Internal(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// LimitBody caps request bodies at n bytes; reading past the cap fails, and handlers that decode the
// body answer 413 through IsTooLarge.
func LimitBody(n int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > n {
				WriteError(w, r, http.StatusRequestEntityTooLarge, TooLarge())
				return
			}
			if r.Body != nil {
				r.Body = http.MaxBytesReader(w, r.Body, n)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// IsTooLarge reports whether err came from reading past the LimitBody cap.
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// StatusWriter keeps the status of the response written through it, for a layer that reports the
// request once its handler has returned (the access log, the request metrics, the trace span):
// Answered is the one status they all report. Make it with NewStatusWriter, so it can tell an
// answer its client never got.
type StatusWriter struct {
	http.ResponseWriter
	status int
	// ctx is the request's context (NewStatusWriter); nil: the client is never taken for gone.
	ctx context.Context
	// lost is set when the answer cannot have reached the client: its status was written after the
	// client had gone, or a write to the connection failed once it had.
	lost bool
}

// NewStatusWriter wraps w for the request r.
func NewStatusWriter(w http.ResponseWriter, r *http.Request) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, ctx: r.Context()}
}

// WriteHeader keeps the first status.
func (s *StatusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
		s.lost = s.gone()
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write is a 200's when no status was written.
func (s *StatusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
		s.lost = s.gone()
	}
	n, err := s.ResponseWriter.Write(b)
	if err != nil && !s.lost {
		s.lost = s.gone()
	}
	return n, err
}

// gone reports whether the request's client has gone away (clientGone): net/http cancels the
// request's context when its connection closes or a write to it fails.
func (s *StatusWriter) gone() bool {
	return s.ctx != nil && errors.Is(s.ctx.Err(), context.Canceled)
}

// Status is the status the response was given (0: none yet).
func (s *StatusWriter) Status() int { return s.status }

// Answered is the status a request is reported with once its handler has returned: the one source
// of truth of the access log's status, the request metrics' status label and the trace span's
// status code. It is StatusClientGone (499, nginx's "client closed request") when the client hung
// up before the answer was delivered: nothing was written by the time the handler returned with
// the client gone (Internal writes nothing to a client that left), the status was written only
// after the client had gone, or a write failed once it had. Otherwise it is the status written,
// 200 for a body written without one or for nothing written at all.
func (s *StatusWriter) Answered() int {
	switch {
	case s.lost, s.status == 0 && s.gone():
		return StatusClientGone
	case s.status == 0:
		return http.StatusOK
	}
	return s.status
}

// Unwrap lets http.ResponseController and the writers further in reach the writer underneath.
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// statusRecorder is the access log's StatusWriter, counting the body's bytes too.
type statusRecorder struct {
	StatusWriter
	bytes int
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	n, err := s.StatusWriter.Write(b)
	s.bytes += n
	return n, err
}

// headerWritten reports whether the response's status line has gone out, looking through the
// writers middleware wrapped around it for the statusRecorder AccessLog installs (or another
// StatusWriter).
func headerWritten(w http.ResponseWriter) bool {
	for {
		switch v := w.(type) {
		case *statusRecorder:
			return v.status != 0
		case *StatusWriter:
			return v.status != 0
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return false
		}
	}
}

// StatusClientGone is the status the access log, the request metrics and the trace span give a
// request whose client went away before its answer was delivered (nginx's 499 "client closed
// request", see StatusWriter.Answered); no 499 is ever sent.
const StatusClientGone = 499

// AccessLog records every response's status (so Internal knows whether a response has started) and
// logs one line per request at level: info in production, so every request leaves a trace, debug
// in development, so a person's terminal stays readable. The route is chi's pattern, never the raw
// path, which would carry ids and secrets in the URL. The line names the authenticated user
// ("user") when the surface's authentication recorded one with SetUser, and has no user field
// for an anonymous request.
func AccessLog(log *slog.Logger, level slog.Level) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ri := info(r.Context())
			if ri == nil {
				// Without WithRequestID in front the slot is made here, so SetUser still reaches it.
				ri = &requestInfo{}
				r = r.WithContext(context.WithValue(r.Context(), requestInfoKey, ri))
			}
			rec := &statusRecorder{StatusWriter: StatusWriter{ResponseWriter: w, ctx: r.Context()}}
			next.ServeHTTP(rec, r)
			if rec.status == http.StatusInternalServerError && !ri.failureLogged {
				// Every 500 leaves an ERROR line with its request id: one written by anything but
				// Internal (which logs its cause) is reported here, without a cause to give.
				log.ErrorContext(r.Context(), "answered 500 without logging a cause", "request_id", ri.id,
					"method", r.Method, "path", r.URL.Path)
			}
			if !log.Enabled(r.Context(), level) {
				return
			}
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			if route == "" {
				route = "unmatched"
			}
			status := rec.Answered() // 499 for an answer its client never got, as in the metrics
			attrs := [...]slog.Attr{slog.String("request_id", ri.id), slog.String("method", r.Method),
				slog.String("route", route), slog.Int("status", status), slog.Int("bytes", rec.bytes),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000), slog.String("client", r.RemoteAddr), slog.String("user", ri.user)}
			n := len(attrs)
			if ri.user == "" {
				n-- // the user is last: an anonymous request's line has no user field
			}
			log.LogAttrs(r.Context(), level, "request", attrs[:n]...)
		})
	}
}
