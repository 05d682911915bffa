package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// realConnectError is what pgx returns when PostgreSQL's socket is not there.
func realConnectError(t *testing.T) error {
	t.Helper()
	dir := t.TempDir()
	_, err := pgconn.Connect(context.Background(), "host="+filepath.Join(dir, "nowhere")+" user=x dbname=x sslmode=disable connect_timeout=2")
	if err == nil {
		t.Fatal("connected to a socket that does not exist")
	}
	return err
}

func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connect refused (pool acquire)", fmt.Errorf("list orders: %w", realConnectError(t)), true},
		{"connection exception 08006", &pgconn.PgError{Code: "08006"}, true},
		{"admin shutdown 57P01", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown 57P02", &pgconn.PgError{Code: "57P02"}, true},
		{"starting up 57P03", &pgconn.PgError{Code: "57P03"}, true},
		{"read-only after a demotion 25006", &pgconn.PgError{Code: "25006"}, true},
		{"connection lost mid-query", fmt.Errorf("query: %w", io.ErrUnexpectedEOF), true},
		{"network error", &net.OpError{Op: "read", Net: "unix", Err: errors.New("connection reset by peer")}, true},
		{"disk full 53100", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "53100"}), true},
		{"out of memory 53200", &pgconn.PgError{Code: "53200"}, true},
		{"too many connections 53300", &pgconn.PgError{Code: "53300"}, true},
		{"temp_file_limit 53400", &pgconn.PgError{Code: "53400"}, true},
		{"unique violation is no outage", &pgconn.PgError{Code: "23505"}, false},
		{"query cancelled is no outage", &pgconn.PgError{Code: "57014"}, false},
		{"plain bug", errors.New("nil map"), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		if got := DatabaseUnavailable(tc.err); got != tc.want {
			t.Errorf("%s: DatabaseUnavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// While the database is down every route answers 503 database_unavailable with Retry-After, and
// the log says so once per period with a count instead of one ERROR line per request.
func TestInternal_DatabaseDownIs503AndLoggedOncePerPeriod(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	dbErr := fmt.Errorf("get user: %w", realConnectError(t))
	h := WithRequestID(ReportOutages(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Internal(w, r, dbErr)
	})))
	for range 200 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/users/1/orders", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("status = %d, want 503", rec.Code)
		}
		if got := rec.Header().Get("Retry-After"); got != "5" {
			t.Fatalf("Retry-After = %q, want 5", got)
		}
		if e := decodeError(t, rec.Body); e.Code != CodeDatabaseUnavailable || e.RequestID == "" || strings.Contains(e.Message, "nowhere") {
			t.Fatalf("error = %+v, want database_unavailable with a request id and no internals", e)
		}
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 {
		t.Fatalf("200 refused requests logged %d lines, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "requests=1") {
		t.Fatalf("first line = %s, want an ERROR line counting the first request", logs.String())
	}
}

// A handler that writes its own 503 (the readiness probe) reports through the same limiter as the
// database_unavailable answers, and logs at warn each time only where no limiter is in place.
func TestReportOutage_SharesTheLimiter(t *testing.T) {
	t.Parallel()
	dbErr := realConnectError(t)
	for _, tc := range []struct {
		name    string
		limited bool
		want    int
	}{{"below ReportOutages", true, 1}, {"without it", false, 40}} {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/readyz" {
				ReportOutage(r, log, dbErr)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			Internal(w, r, dbErr)
		})
		if tc.limited {
			h = ReportOutages(log)(h)
		}
		h = WithLogger(log)(h)
		for i := range 40 {
			path := "/readyz"
			if i%2 == 1 {
				path = "/users/1/orders"
			}
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		}
		if n := strings.Count(logs.String(), "database unavailable: answering 503"); n != tc.want {
			t.Errorf("%s: 40 failures logged %d lines, want %d:\n%s", tc.name, n, tc.want, logs.String())
		}
	}
}

// A full disk (SQLSTATE class 53) is answered like an unreachable database, through the same
// rate-limited line, and keeps ExhaustedRecently true for ExhaustedHold after the last refusal,
// while a connection failure does not (the readiness probe's ping sees that one itself).
func TestInternal_DiskFullIs503AndExhaustedForAWhile(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := &outageLog{log: slog.New(slog.NewTextHandler(&logs, nil)), every: outageReportEvery, now: func() time.Time { return now }}
	diskFull := fmt.Errorf("create order: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"})
	var exhausted bool
	h := WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), outageKey{}, o))
		switch r.URL.Path {
		case "/readyz":
			exhausted = ExhaustedRecently(r)
		case "/down":
			Internal(w, r, realConnectError(t))
		default:
			Internal(w, r, diskFull)
		}
	}))
	probe := func() bool {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return exhausted
	}
	if probe() {
		t.Fatal("exhausted before any failure")
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/down", nil))
	if probe() {
		t.Fatal("an unreachable database counted as exhausted")
	}
	for range 100 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/orders", nil))
		if e := decodeError(t, rec.Body); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "5" ||
			e.Code != CodeDatabaseUnavailable || strings.Contains(e.Message, "extend") {
			t.Fatalf("disk full: %d Retry-After=%q %+v, want 503 database_unavailable with Retry-After 5", rec.Code, rec.Header().Get("Retry-After"), e)
		}
	}
	if n := strings.Count(logs.String(), "database unavailable: answering 503"); n != 1 || strings.Contains(logs.String(), "internal error") {
		t.Fatalf("101 refusals logged %d outage lines, want 1:\n%s", n, logs.String())
	}
	now = now.Add(ExhaustedHold - time.Second)
	if !probe() {
		t.Fatal("not exhausted within the hold after the last refusal")
	}
	now = now.Add(time.Second)
	if probe() {
		t.Fatal("still exhausted after the hold")
	}
}

func TestOutageLog_CountsBetweenLines(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := &outageLog{log: slog.New(slog.NewTextHandler(&logs, nil)), every: 5 * time.Second, now: func() time.Time { return now }}
	for i := range 30 { // 30 failures over 3 s: one line, for the first
		now = now.Add(100 * time.Millisecond * time.Duration(min(i, 1)))
		o.report(context.Background(), errors.New("down"))
	}
	now = now.Add(5 * time.Second)
	o.report(context.Background(), errors.New("down"))
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "requests=1 ") || !strings.Contains(lines[1], "requests=30 ") {
		t.Fatalf("lines = %q, want requests=1 then requests=30 (the 29 held back plus this one)", lines)
	}
}

// A client that goes away mid-request is no server error: debug only, and nothing is written.
func TestInternal_ClientGoneIsDebug(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	WithLogger(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Internal(w, r, fmt.Errorf("query: %w", context.Canceled))
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/orders", nil).WithContext(ctx))
	if rec.Body.Len() != 0 {
		t.Fatalf("wrote %q to a client that is gone", rec.Body)
	}
	if strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "level=DEBUG") {
		t.Fatalf("log = %s, want one DEBUG line and no ERROR", logs.String())
	}
}

// A failure after the status line went out cannot change the status: it is logged, and no second
// WriteHeader is attempted (net/http would log "superfluous response.WriteHeader call").
func TestInternal_AfterResponseStartedWritesNothingMore(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := AccessLog(log, slog.LevelDebug)(WithLogger(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"partial":`))
		Internal(w, r, errors.New("encoding failed"))
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != `{"partial":` {
		t.Fatalf("response = %d %q, want the started 200 left alone", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "failed after the response started") {
		t.Fatalf("log = %s", logs.String())
	}
}

// Through a real net/http server: a failure after the response started leaves net/http nothing to
// complain about (no "superfluous response.WriteHeader call" in its error log) and the client gets
// the started response.
func TestInternal_AfterResponseStartedRealServer(t *testing.T) {
	t.Parallel()
	var logs, serverLog syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	srv := httptest.NewUnstartedServer(AccessLog(log, slog.LevelDebug)(WithLogger(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"partial":`))
		Internal(w, r, errors.New("encoding failed"))
	}))))
	srv.Config.ErrorLog = slog.NewLogLogger(slog.NewTextHandler(&serverLog, nil), slog.LevelWarn)
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close() // flushes the server's logging
	if strings.Contains(serverLog.String(), "superfluous") {
		t.Fatalf("net/http logged: %s", serverLog.String())
	}
	if resp.StatusCode != http.StatusOK || string(body) != `{"partial":` {
		t.Fatalf("response = %d %q, want the started 200 left alone", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "failed after the response started") {
		t.Fatalf("log = %s", logs.String())
	}
}

// syncBuf is a log sink safe for the server's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
