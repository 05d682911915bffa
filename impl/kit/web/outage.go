package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// CodeDatabaseUnavailable is the error code of the 503 every route that needs the database answers
// while PostgreSQL cannot be reached or has run out of a resource (disk, memory, connections).
const CodeDatabaseUnavailable = "database_unavailable"

// RetryAfterDatabase is the Retry-After (seconds) of a database_unavailable answer: about the time
// the managed cluster's supervisor needs to bring a crashed PostgreSQL back.
const RetryAfterDatabase = 5

// DatabaseUnavailable reports whether err means PostgreSQL could not be reached, dropped the
// connection or ran out of resources, rather than that a query failed: a failed connect (refused,
// no socket, pool acquire timed out while connecting), a connection lost mid-query, SQLSTATE class
// 08 (connection exception), 57P01-57P03 (the server is shutting down, crashed, or not accepting
// yet), 25006 (a write on a primary demoted a moment ago) and class 53 (DatabaseExhausted: disk full, out of memory, too many connections).
func DatabaseUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if DatabaseExhausted(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 25006 (read_only_sql_transaction): a write reached a primary that has just been demoted
		// (a switchover or failover, before the pooler's connections to it are cut): the next
		// attempt reaches the new primary.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" ||
			pgErr.Code == "25006"
	}
	var netErr *net.OpError
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "conn closed")
}

// DatabaseExhausted reports whether err is PostgreSQL refusing for lack of a resource: SQLSTATE
// class 53 (insufficient resources: 53100 disk full, 53200 out of memory, 53300 too many
// connections, 53400 a configuration limit such as temp_file_limit). Every request that writes
// fails the same way until an operator frees the resource, so it is an outage like an unreachable
// database (503 database_unavailable, the shared rate-limited log line), not a bug per request
// (500 and an ERROR line each), and the readiness probe reports it (ExhaustedRecently).
func DatabaseExhausted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "53")
}

// clientGone reports whether the request failed because its client went away: net/http cancels the
// request's context when the connection closes or a write to it fails. (Servers here never cancel
// request contexts at shutdown: they finish in-flight requests.)
func clientGone(r *http.Request) bool {
	return r != nil && errors.Is(r.Context().Err(), context.Canceled)
}

// outageReportEvery is how often at most the log says the database is unavailable.
const outageReportEvery = 5 * time.Second

// ExhaustedHold is how long after the last request refused for a class-53 error (DatabaseExhausted)
// ExhaustedRecently stays true, so the readiness probe reports not ready. A ping succeeds on a full
// disk (reading needs no space), so only the refusals themselves show the outage; the hold covers
// a few probe periods between them, and ends on its own once no request has failed for that long.
const ExhaustedHold = 15 * time.Second

// outageLog turns a storm of database failures into one log line every few seconds with a count:
// while PostgreSQL is down every request fails the same way, and one ERROR line per request would
// bury everything else (thousands of lines a second under load).
type outageLog struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	last      time.Time // when the last line was written
	pending   int       // failures since then
	exhausted time.Time // when the last class-53 failure was reported
}

// report counts one failure and writes a line when the last one is older than every.
func (o *outageLog) report(ctx context.Context, err error) {
	o.mu.Lock()
	o.pending++
	now := o.now()
	if DatabaseExhausted(err) {
		o.exhausted = now
	}
	if !o.last.IsZero() && now.Sub(o.last) < o.every {
		o.mu.Unlock()
		return
	}
	n := o.pending
	o.pending = 0
	o.last = now
	o.mu.Unlock()
	o.log.ErrorContext(ctx, "database unavailable: answering 503", "requests", n, "err", err)
}

type outageKey struct{}

// ReportOutages makes the database_unavailable answers of every request below it share one
// rate-limited log (at most one line every five seconds, with the number of requests refused).
// Without it each one is logged at warn.
func ReportOutages(log *slog.Logger) func(http.Handler) http.Handler {
	o := &outageLog{log: log, every: outageReportEvery, now: time.Now}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), outageKey{}, o)))
		})
	}
}

// recentlyExhausted reports whether a class-53 failure was reported within ExhaustedHold.
func (o *outageLog) recentlyExhausted() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.exhausted.IsZero() && o.now().Sub(o.exhausted) < ExhaustedHold
}

// ExhaustedRecently reports whether, below the same ReportOutages as r, a request was answered
// 503 for a class-53 error (DatabaseExhausted) within the last ExhaustedHold: what the readiness
// probe needs to say not ready while PostgreSQL still answers its ping. False when r did not pass
// ReportOutages.
func ExhaustedRecently(r *http.Request) bool {
	o, ok := r.Context().Value(outageKey{}).(*outageLog)
	return ok && o.recentlyExhausted()
}

// ReportOutage logs that r is answered 503 because the database cannot be reached, for a handler
// that writes its own 503 (the readiness probe): through the rate-limited log of ReportOutages when
// r passed it, so a probe every few seconds during an outage adds to its count rather than a line
// each; else at warn on log (nil: the request's logger, see Logger).
func ReportOutage(r *http.Request, log *slog.Logger, err error) {
	if o, ok := r.Context().Value(outageKey{}).(*outageLog); ok {
		o.report(r.Context(), err)
	} else {
		if log == nil {
			log = Logger(r.Context())
		}
		log.WarnContext(r.Context(), "database unavailable: answering 503", "err", err, "request_id", RequestID(r.Context()))
	}
}

// unavailable answers 503 database_unavailable with Retry-After and reports the failure.
func unavailable(w http.ResponseWriter, r *http.Request, err error) {
	ReportOutage(r, nil, err)
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterDatabase))
	WriteError(w, r, http.StatusServiceUnavailable, Error{Code: CodeDatabaseUnavailable,
		Message: MessageDatabaseDown})
}

// The answer to work the server declined for lack of room or time, on every surface: the password
// hasher full (refusal.ServerBusy), a list page past its time limit, a statement PostgreSQL
// given up at its statement_timeout or lock_timeout (StatementTimedOut).
const (
	CodeServerBusy    = "server_busy"
	MessageServerBusy = "the server is busy; try again shortly"
	// RetryAfterBusy is the Retry-After (seconds) of a server_busy answer: the shedding is brief.
	RetryAfterBusy = 1
)

// StatementTimedOut reports whether err is PostgreSQL giving up a statement at a time limit:
// SQLSTATE 57014 query_canceled (past its statement_timeout, the role's or a list page's own, or
// an operator's pg_cancel_backend) or 55P03 lock_not_available (past its lock_timeout, waiting for
// a lock another transaction holds). The database is up and the next attempt may well pass, so
// Internal answers it 503 server_busy with Retry-After, not 500. A statement cancelled because the
// request's own client hung up fails the same way (pgx cancels the statement when the request's
// context ends): Internal tells that one apart first (clientGone), and answers nothing (the access
// log and the request metrics say 499).
func StatementTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "57014" || pgErr.Code == "55P03")
}

// busy answers 503 server_busy with Retry-After for a statement PostgreSQL cancelled, logged at
// warn: the server declined work it had no time for, as designed, not a bug (no ERROR line, and
// the refusal code keeps it out of the error-budget alerts' failures).
func busy(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	id := ensureRequestID(w, r)
	Logger(ctx).WarnContext(ctx, "statement given up at the database's time limit (statement_timeout or lock_timeout): answering 503 server_busy", "err", err,
		"request_id", id, "method", r.Method, "path", r.URL.Path)
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterBusy))
	WriteError(w, r, http.StatusServiceUnavailable, Error{Code: CodeServerBusy, Message: MessageServerBusy})
}
