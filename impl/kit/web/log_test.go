package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// errorLines returns the ERROR records of a JSON log.
func errorLines(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["level"] == "ERROR" {
			out = append(out, m)
		}
	}
	return out
}

// TestInternal_LogsOnTheRequestsLogger: Internal takes no logger; it writes its ERROR line, with
// the request id the answer carries, to the logger WithLogger gave the request, the innermost one
// when two are nested, and the outer one is the request's again once the inner layer returns.
func TestInternal_LogsOnTheRequestsLogger(t *testing.T) {
	t.Parallel()
	var outer, inner bytes.Buffer
	var after *slog.Logger
	outerLog := slog.New(slog.NewJSONHandler(&outer, nil))
	failing := WithLogger(slog.New(slog.NewJSONHandler(&inner, nil)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Internal(w, r, errors.New("boom"))
	}))
	h := WithRequestID(WithLogger(outerLog)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		failing.ServeHTTP(w, r)
		after = Logger(r.Context())
	})))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set("X-Request-Id", "req-42")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if e := decodeError(t, rec.Body); rec.Code != http.StatusInternalServerError || e.RequestID != "req-42" {
		t.Fatalf("answer = %d %+v, want 500 with requestId req-42", rec.Code, e)
	}
	lines := errorLines(t, &inner)
	if len(lines) != 1 || lines[0]["request_id"] != "req-42" || lines[0]["err"] != "boom" {
		t.Fatalf("inner log = %s, want one ERROR line with request_id req-42 and the cause", inner.String())
	}
	if outer.Len() != 0 {
		t.Fatalf("outer log = %s, want nothing (the inner layer's logger took the line)", outer.String())
	}
	if after != outerLog {
		t.Fatal("the outer logger is not the request's again after the inner layer returned")
	}
}

// TestInternal_WithoutRequestIDGivesOne: a handler served outside WithRequestID (a library on a
// site's own router) still answers a 500 whose requestId, X-Request-Id header and log line agree.
func TestInternal_WithoutRequestIDGivesOne(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Internal(w, r, errors.New("boom"))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	e := decodeError(t, rec.Body)
	lines := errorLines(t, &logs)
	if e.RequestID == "" || rec.Header().Get("X-Request-Id") != e.RequestID || len(lines) != 1 || lines[0]["request_id"] != e.RequestID {
		t.Fatalf("requestId %q, header %q, log %s: want one id in all three", e.RequestID, rec.Header().Get("X-Request-Id"), logs.String())
	}
}

// TestAccessLog_Unexplained500: a 500 written by anything but Internal leaves an ERROR line with
// its request id all the same; one from Internal is logged once, with its cause, not twice.
func TestAccessLog_Unexplained500(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		msg     string
	}{
		{"written directly", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			"answered 500 without logging a cause"},
		{"through Internal", func(w http.ResponseWriter, r *http.Request) { Internal(w, r, errors.New("boom")) }, "internal error"},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		h := WithRequestID(WithLogger(log)(AccessLog(log, slog.LevelDebug)(tc.handler)))
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		req.Header.Set("X-Request-Id", "req-7")
		h.ServeHTTP(httptest.NewRecorder(), req)
		lines := errorLines(t, &logs)
		if len(lines) != 1 || lines[0]["msg"] != tc.msg || lines[0]["request_id"] != "req-7" {
			t.Errorf("%s: ERROR lines %v, want one %q with request_id req-7", tc.name, lines, tc.msg)
		}
	}
}

// TestWithRequestID_KeepsAnOuterID: a second WithRequestID (a library's, under the server's) keeps
// the id the first gave, so the access log and the failure's line agree.
func TestWithRequestID_KeepsAnOuterID(t *testing.T) {
	t.Parallel()
	var outer, inner string
	innerH := WithRequestID(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { inner = RequestID(r.Context()) }))
	h := WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outer = RequestID(r.Context())
		innerH.ServeHTTP(w, r)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if outer == "" || inner != outer || rec.Header().Get("X-Request-Id") != outer {
		t.Fatalf("outer id %q, inner %q, header %q: want one id", outer, inner, rec.Header().Get("X-Request-Id"))
	}
}

// TestRequestHandler_EveryLineOfARequestNamesIt: a line logged with a request's context (by any
// logger over RequestHandler, the request's own or a library's) carries its request_id and, once
// the tracing middleware has named it, its trace_id; a line that names request_id itself is not
// given a second one, and a line outside any request carries neither.
func TestRequestHandler_EveryLineOfARequestNamesIt(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(RequestHandler(slog.NewJSONHandler(&logs, nil)))
	h := WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.WarnContext(r.Context(), "before the trace")
		SetTraceID(r.Context(), "4bf92f3577b34da6a3ce929d0e0e4736")
		log.With("provider", "github").WarnContext(r.Context(), "library line")
		log.InfoContext(r.Context(), "own id", LogRequestID, "kept")
		log.Info("no context")
	}))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set(RequestIDHeader, "req-1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
		if n := strings.Count(l, `"request_id"`); n > 1 {
			t.Errorf("request_id %d times in %s", n, l)
		}
	}
	want := []struct{ id, trace any }{{"req-1", nil}, {"req-1", "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"kept", "4bf92f3577b34da6a3ce929d0e0e4736"}, {nil, nil}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		if lines[i][LogRequestID] != w.id || lines[i][LogTraceID] != w.trace {
			t.Errorf("line %q: request_id %v trace_id %v, want %v %v", lines[i]["msg"], lines[i][LogRequestID], lines[i][LogTraceID], w.id, w.trace)
		}
	}
	if lines[1]["provider"] != "github" {
		t.Errorf("the library's own attribute was lost: %v", lines[1])
	}
}
