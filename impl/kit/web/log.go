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
