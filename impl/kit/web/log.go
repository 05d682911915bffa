package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
)

// WithLogger makes log the logger of every request below it: the one Internal, Recover and the
// database-outage answers write to, so a handler that fails has no logger to forget or pass nil
// for. router.New installs it right behind WithRequestID with the server's logger; a library that
// logs elsewhere (the auth library's Options.Logger) installs its own around its routes, and the
// request's logger is the outer one again once they return. A nil log means slog.Default().
//
// Below WithRequestID (or AccessLog) it costs no allocation: the logger goes into the request's
// one info value. Elsewhere it adds that value to the context.
func WithLogger(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i := info(r.Context())
			if i == nil {
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestInfoKey, &requestInfo{log: log})))
				return
			}
			outer := i.log
			i.log = log
			defer func() { i.log = outer }()
			next.ServeHTTP(w, r)
		})
	}
}

// Logger returns the logger of the request ctx belongs to: the one WithLogger set, or
// slog.Default() (the process's standard log) when none did. It is never nil and never silent by
// omission: a failure reported through it is written somewhere.
func Logger(ctx context.Context) *slog.Logger {
	if i := info(ctx); i != nil && i.log != nil {
		return i.log
	}
	return slog.Default()
}

// ensureRequestID returns r's request id, giving r one first when it has none (a handler served
// outside WithRequestID, such as the auth library mounted on a site's own router): a failure's log
// line and its answer then carry the same id, set as the response's X-Request-Id too. Only the
// failure paths call it, so a request that succeeds pays nothing for ids it never shows.
func ensureRequestID(w http.ResponseWriter, r *http.Request) string {
	i := info(r.Context())
	if i != nil && i.id != "" {
		return i.id
	}
	id := r.Header.Get("X-Request-Id")
	if !saneID(id) {
		id = newRequestID()
	}
	if i != nil {
		i.id = id
	}
	w.Header().Set("X-Request-Id", id)
	return id
}

// newRequestID is a fresh random request id: 16 hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// markFailureLogged records that the request's failure was logged with its id, so AccessLog need
// not report a 500 as unexplained.
func markFailureLogged(ctx context.Context) {
	if i := info(ctx); i != nil {
		i.failureLogged = true
	}
}

// Log field names of a request's ids: every line a request causes carries both (RequestHandler).
const (
	LogRequestID = "request_id"
	LogTraceID   = "trace_id"
)

// RequestHandler wraps h so that every record logged with a request's context (InfoContext and
// the like, or any line of a logger from Logger) carries the request's id as request_id and, when
// the request is traced, its trace id as trace_id: no call site has to remember them, and a line
// that names either itself keeps its own. Records logged without a request's context pass
// through as they are. The server wraps its logger in it once, at start.
func RequestHandler(h slog.Handler) slog.Handler { return requestHandler{h} }

type requestHandler struct{ slog.Handler }

func (h requestHandler) Handle(ctx context.Context, r slog.Record) error {
	if i := info(ctx); i != nil && (i.id != "" || i.traceID != "") {
		id, trace := i.id, i.traceID
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case LogRequestID:
				id = ""
			case LogTraceID:
				trace = ""
			}
			return true
		})
		if id != "" || trace != "" {
			r = r.Clone() // the record's attributes may be shared with the caller's
			if id != "" {
				r.AddAttrs(slog.String(LogRequestID, id))
			}
			if trace != "" {
				r.AddAttrs(slog.String(LogTraceID, trace))
			}
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestHandler{h.Handler.WithAttrs(as)}
}

func (h requestHandler) WithGroup(name string) slog.Handler {
	return requestHandler{h.Handler.WithGroup(name)}
}
