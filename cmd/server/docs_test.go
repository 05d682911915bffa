package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

// jsString quotes s as a JavaScript string literal (JSON is a subset).
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// brokenConn is a response writer whose connection broke: every write fails; it records the
// statuses it is given.
type brokenConn struct {
	header   http.Header
	statuses []int
}

func (b *brokenConn) Header() http.Header         { return b.header }
func (b *brokenConn) WriteHeader(code int)        { b.statuses = append(b.statuses, code) }
func (b *brokenConn) Write(p []byte) (int, error) { return 0, errors.New("broken pipe") }

// TestFirstStatus: what the Swagger UI's file server does when a client hangs up mid-file (a 200
// and a failed write, then http.Error's 500) reaches the connection as the 200 alone, and its
// error text is not written.
func TestFirstStatus(t *testing.T) {
	t.Parallel()
	conn := &brokenConn{header: http.Header{}}
	w := &firstStatus{ResponseWriter: conn}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("window.SwaggerUIBundle = ")); err == nil {
		t.Fatal("the failed write reported no error")
	}
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	if len(conn.statuses) != 1 || conn.statuses[0] != http.StatusOK {
		t.Fatalf("statuses sent %v, want [200]", conn.statuses)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, errWriteFailed) {
		t.Fatalf("write after a failed one: %v, want errWriteFailed", err)
	}
}
