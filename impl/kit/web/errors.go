// Package web holds the HTTP plumbing every surface of the server shares: one JSON error body,
// request ids, panic recovery, body limits, spec-driven request validation and the strict-handler
// error hooks. Domain packages never import it; handlers and cmd/server do.
package web

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// Error is the JSON body of every refusal outside the OAuth token endpoint. Each spec documents it
// as its `Error` schema.
type Error struct {
	// Code is a stable machine-readable reason, e.g. "not_found" or "validation_failed".
	Code string `json:"code"`
	// Message is a human-readable sentence; it never carries internal error text.
	Message string `json:"message"`
	// Details lists per-field problems for validation failures.
	Details []FieldError `json:"details,omitempty"`
	// RequestID repeats the X-Request-Id header so a report can be matched to the server log.
	RequestID string `json:"requestId,omitempty"`
}

// FieldError is one entry of details: where (in), which field, the rule broken (code), its limit,
// and the code's one message. It is the vocabulary of package invalid, which the domains speak too.
type FieldError = invalid.Detail

// Common error codes shared by all surfaces.
const (
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeValidation       = "validation_failed"
	CodeInternal         = "internal_error"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"
	CodeConflict         = "conflict"
	CodeTooLarge         = "request_too_large"
	// CodeUnsupportedMediaType answers a body whose Content-Type the operation does not take (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
)

// WriteJSON writes v as a JSON body with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	// A shared value under the canonical key: Set would allocate a slice per response.
	w.Header()["Content-Type"] = contentTypeJSON
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// contentTypeJSON is never changed: a later Add to the header appends to a full slice, which copies it.
var contentTypeJSON = []string{"application/json"}

// WriteError writes the shared error body, stamping it with the request id, and records its code
// as the request's refusal code (RefusalCode).
func WriteError(w http.ResponseWriter, r *http.Request, status int, e Error) {
	if r != nil {
		e.RequestID = RequestID(r.Context())
		noteRefusal(r, e.Code)
	}
	WriteJSON(w, status, e)
}

// noteRefusal records code as the refusal code of r (outside WithRequestID it does nothing).
func noteRefusal(r *http.Request, code string) {
	if i := info(r.Context()); i != nil {
		i.code = code
	}
}

// RefusalCode is the code of the error body the request was answered with (the shared body's code,
// or an OAuth token endpoint's error), "" when it was answered without one: a success, or a
// refusal written some other way. The request metrics label their counts with it, so a 503
// server_busy (a flood handled as designed) and a 503 database_unavailable (an outage) differ.
func RefusalCode(ctx context.Context) string {
	if i := info(ctx); i != nil {
		return i.code
	}
	return ""
}

// Internal answers a request that failed inside the server, and is the one place such failures are
// classified. It logs on the request's logger (WithLogger; slog.Default() where none was set), so
// no caller can leave a failure unlogged:
//   - the client went away (its connection closed mid-request or mid-response): nothing to answer,
//     logged at debug, since it is no fault of the server;
//   - the response had already started: only logged (ERROR), because a second status line cannot
//     be sent;
//   - the database is unreachable (DatabaseUnavailable): 503 database_unavailable with Retry-After,
//     logged at most once every few seconds with a count (see ReportOutages);
//   - PostgreSQL gave up a statement (StatementTimedOut: its statement_timeout or lock_timeout) while the client
//     was still there: 503 server_busy with Retry-After: 1, logged at warn;
//   - anything else: an ERROR line with the request id and a 500 that reveals nothing but that id.
//     A request that reached no WithRequestID gets an id here (and as its X-Request-Id), so the
//     answer can always be found in the log.
func Internal(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	log := Logger(ctx)
	if clientGone(r) {
		log.DebugContext(ctx, "client gone before the response was complete", "err", err,
			"request_id", RequestID(ctx), "method", r.Method, "path", r.URL.Path)
		return
	}
	if headerWritten(w) {
		log.ErrorContext(ctx, "failed after the response started", "err", err,
			"request_id", RequestID(ctx), "method", r.Method, "path", r.URL.Path)
		markFailureLogged(ctx)
		return
	}
	if DatabaseUnavailable(err) {
		unavailable(w, r, err)
		return
	}
	if StatementTimedOut(err) {
		busy(w, r, err)
		return
	}
	id := LogFailure(w, r, err)
	WriteJSON(w, http.StatusInternalServerError, Error{Code: CodeInternal, Message: MessageInternal, RequestID: id})
}

// LogFailure writes the ERROR line of a request answered 500 (cause, request id, method, path) on
// the request's logger and returns the id, giving the request one if it had none (see Internal).
// It is Internal's logging alone, for a handler whose 500 is not the shared Error body (the OAuth
// token endpoint's RFC 6749 server_error) and which answers right after.
func LogFailure(w http.ResponseWriter, r *http.Request, err error) string {
	ctx := r.Context()
	id := ensureRequestID(w, r)
	Logger(ctx).ErrorContext(ctx, "internal error", "err", err, "request_id", id, "method", r.Method, "path", r.URL.Path)
	markFailureLogged(ctx)
	return id
}

// NotFound answers unknown routes with the JSON error body.
func NotFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusNotFound, Error{Code: CodeNotFound, Message: "no such route: " + r.Method + " " + r.URL.Path})
}

// MethodNotAllowed answers known routes called with the wrong method.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusMethodNotAllowed, Error{Code: CodeMethodNotAllowed, Message: "method " + r.Method + " is not allowed on " + r.URL.Path})
}
