package router

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// syncBuffer is a log sink read while the server writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records are the JSON log lines written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

// stack is the server's shared stack as cmd/server chains it (the request metrics outside, the
// access log inside) over a real socket, with the routes given.
type stack struct {
	srv  *httptest.Server
	m    *metrics.Registry
	logs *syncBuffer
}

func newStack(t *testing.T, routes func(chi.Router)) *stack {
	t.Helper()
	s := &stack{m: metrics.New(), logs: &syncBuffer{}}
	log := slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := New(Options{Log: log, AccessLog: true, AccessLevel: slog.LevelInfo,
		Outer: []func(http.Handler) http.Handler{s.m.Middleware}})
	routes(r)
	s.srv = httptest.NewServer(r)
	t.Cleanup(s.srv.Close)
	return s
}

// requests are the series of triad_http_requests_total scraped from the registry, each its labels
// as the exposition writes them and its value.
func (s *stack) requests(t *testing.T) map[string]string {
	t.Helper()
	rec := httptest.NewRecorder()
	s.m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := map[string]string{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "triad_http_requests_total{"); ok {
			labels, value, _ := strings.Cut(rest, "} ")
			out[labels] = value
		}
	}
	return out
}

// accessLine is the access log's line of route, once written (nil until then).
func (s *stack) accessLine(t *testing.T, route string) map[string]any {
	t.Helper()
	for _, rec := range s.logs.records(t) {
		if rec["msg"] == "request" && rec["route"] == route {
			return rec
		}
	}
	return nil
}

// waitAccessLine polls for the access log's line of route: the handler of a request whose client
// hung up returns on its own time.
func (s *stack) waitAccessLine(t *testing.T, route string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(patience.Bound(30 * time.Second))
	for time.Now().Before(deadline) {
		if line := s.accessLine(t, route); line != nil {
			return line
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no access log line for %s; log:\n%s", route, s.logs.b.String())
	return nil
}

// A statement PostgreSQL gives up at its statement_timeout (SQLSTATE 57014) or its lock_timeout
// (55P03: a lock another transaction holds) is the server declining work it has no time for: 503
// server_busy with Retry-After and the shared body, a warning (no ERROR line), counted under its
// refusal code so the error-budget alerts leave it out.
func TestInternal_StatementTimeoutIs503ServerBusy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, code, limit, stmt string }{
		{"statement_timeout", "57014", "SET LOCAL statement_timeout = '50ms'", "SELECT pg_sleep(30)"},
		{"lock_timeout", "55P03", "SET LOCAL lock_timeout = '50ms'", "SELECT * FROM held"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			timedOutIs503(t, c.code, c.limit, c.stmt)
		})
	}
}

// timedOutIs503 serves GET /slow running stmt under limit (a table held ACCESS EXCLUSIVE by
// another session is there to wait for) and checks the answer, the log and the metrics.
func timedOutIs503(t *testing.T, code, limit, stmt string) {
	pool, err := pgxpool.New(context.Background(), dbtest.NewEmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE held (id int)"); err != nil {
		t.Fatal(err)
	}
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Rollback(context.Background()) })
	if _, err := holder.Exec(ctx, "LOCK TABLE held IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, func(r chi.Router) {
		r.Get("/slow", func(w http.ResponseWriter, r *http.Request) {
			err := func() error {
				tx, err := pool.Begin(r.Context())
				if err != nil {
					return err
				}
				defer tx.Rollback(context.Background())
				if _, err := tx.Exec(r.Context(), limit); err != nil {
					return err
				}
				_, err = tx.Exec(r.Context(), stmt)
				return err
			}()
			if err == nil {
				t.Errorf("%s outlived %s", stmt, limit)
			}
			web.Internal(w, r, err)
		})
	})
	resp, err := http.Get(s.srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503; body %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	var e web.Error
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if e.Code != "server_busy" || e.Message != "the server is busy; try again shortly" || e.RequestID == "" ||
		e.RequestID != resp.Header.Get(web.RequestIDHeader) {
		t.Errorf("body = %+v, want server_busy with its one message and the request id %q", e, resp.Header.Get(web.RequestIDHeader))
	}
	line := s.waitAccessLine(t, "/slow")
	if line["status"] != float64(503) {
		t.Errorf("access log status = %v, want 503", line["status"])
	}
	warned := false
	for _, rec := range s.logs.records(t) {
		if rec["level"] == "ERROR" {
			t.Errorf("a cancelled statement logged an ERROR line: %v", rec)
		}
		if rec["level"] == "WARN" && strings.Contains(rec["msg"].(string), "server_busy") &&
			strings.Contains(rec["err"].(string), code) && rec["request_id"] == e.RequestID {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no WARN line naming the statement given up (%s) and the request id; log:\n%s", code, s.logs.b.String())
	}
	want := `code="server_busy",method="GET",operation="/slow",status="503",surface="platform"`
	if got := s.requests(t); got[want] != "1" || len(got) != 1 {
		t.Errorf("triad_http_requests_total = %v, want only {%s} 1", got, want)
	}
}

// A client that hangs up mid-request is reported 499 by the access log and the request metrics
// alike, whether the handler then wrote nothing (its statement cancelled with the request: no 503
// server_busy either) or wrote a 200 nobody was left to receive.
func TestClientGone_MetricsAndAccessLogSay499(t *testing.T) {
	t.Parallel()
	pool, err := pgxpool.New(context.Background(), dbtest.NewEmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	started := make(chan string, 2)
	s := newStack(t, func(r chi.Router) {
		// The statement runs under the request's context: the hang-up cancels it in PostgreSQL.
		r.Get("/query", func(w http.ResponseWriter, r *http.Request) {
			started <- "query"
			_, err := pool.Exec(r.Context(), "SELECT pg_sleep(30)")
			if err == nil {
				t.Error("pg_sleep(30) finished although its client hung up")
			}
			web.Internal(w, r, err)
		})
		// A handler that does not watch its context answers 200 after the client has gone.
		r.Get("/late", func(w http.ResponseWriter, r *http.Request) {
			started <- "late"
			<-r.Context().Done()
			web.WriteJSON(w, http.StatusOK, map[string]string{"ok": "late"})
		})
	})
	for _, route := range []string{"/query", "/late"} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL+route, nil)
		done := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		select {
		case <-started:
		case <-time.After(patience.Bound(30 * time.Second)):
			t.Fatalf("%s: the handler never started", route)
		}
		cancel() // the client hangs up while the handler works
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: client error = %v, want context.Canceled", route, err)
		}
		line := s.waitAccessLine(t, route)
		if line["status"] != float64(web.StatusClientGone) {
			t.Errorf("%s: access log status = %v, want 499", route, line["status"])
		}
	}
	got := s.requests(t)
	for _, route := range []string{"/query", "/late"} {
		want := `code="",method="GET",operation="` + route + `",status="499",surface="platform"`
		if got[want] != "1" {
			t.Errorf("triad_http_requests_total{%s} = %q, want 1 (all: %v)", want, got[want], got)
		}
	}
	if len(got) != 2 {
		t.Errorf("triad_http_requests_total has %d series, want the two 499s: %v", len(got), got)
	}
	for _, rec := range s.logs.records(t) {
		if lvl := rec["level"]; lvl == "ERROR" || lvl == "WARN" {
			t.Errorf("a client hanging up logged %v: %v", lvl, rec)
		}
	}
}
