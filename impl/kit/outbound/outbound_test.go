package outbound_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/kit/outbound"
)

func server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.(http.Flusher).Flush() // chunked: no Content-Length, so the cap must stop the stream
		_, _ = io.WriteString(w, strings.Repeat("x", 2048))
	})
	mux.HandleFunc("/declared", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 2048)) // small enough to get a Content-Length
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func get(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestNew_RefusesLoopbackUnlessAllowed: the default client never reaches a loopback server; the
// explicit opt-out (tests, the dev provider) does.
func TestNew_RefusesLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	ts := server(t)
	if _, err := get(outbound.New(outbound.Options{}), ts.URL+"/ok"); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("guarded: err = %v, want ErrForbiddenAddress", err)
	}
	if b, err := get(outbound.New(outbound.Options{AllowPrivate: true}), ts.URL+"/ok"); err != nil || b != "ok" {
		t.Fatalf("allowed: %q %v", b, err)
	}
}

// TestNew_CapsTheBody: a body past MaxBytes fails with ErrTooLarge, declared or streamed.
func TestNew_CapsTheBody(t *testing.T) {
	t.Parallel()
	ts := server(t)
	c := outbound.New(outbound.Options{AllowPrivate: true, MaxBytes: 1024})
	for _, path := range []string{"/big", "/declared"} {
		if _, err := get(c, ts.URL+path); !errors.Is(err, outbound.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", path, err)
		}
	}
}

// TestNew_Redirects: refused by default (API calls have no reason to follow one), followed up to
// MaxRedirects when set, and never to a scheme other than http(s).
func TestNew_Redirects(t *testing.T) {
	t.Parallel()
	ts := server(t)
	if _, err := get(outbound.New(outbound.Options{AllowPrivate: true}), ts.URL+"/redirect"); !errors.Is(err, outbound.ErrRedirect) {
		t.Fatalf("default: err = %v, want ErrRedirect", err)
	}
	follow := outbound.New(outbound.Options{AllowPrivate: true, MaxRedirects: 1})
	if b, err := get(follow, ts.URL+"/redirect"); err != nil || b != "ok" {
		t.Fatalf("one redirect allowed: %q %v", b, err)
	}
	if _, err := get(follow, ts.URL+"/to-file"); !errors.Is(err, outbound.ErrRedirectScheme) {
		t.Fatalf("to file: err = %v, want ErrRedirectScheme", err)
	}
}

// TestNew_PermitIsNarrow: Permit passes the listed server only; the guard still refuses the rest.
func TestNew_PermitIsNarrow(t *testing.T) {
	t.Parallel()
	ts, other := server(t), server(t)
	addr := netip.MustParseAddrPort(strings.TrimPrefix(ts.URL, "http://"))
	c := outbound.New(outbound.Options{Permit: func(ap netip.AddrPort) bool { return ap == addr }})
	if _, err := get(c, ts.URL+"/ok"); err != nil {
		t.Fatalf("permitted: %v", err)
	}
	if _, err := get(c, other.URL+"/ok"); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("other: err = %v, want ErrForbiddenAddress", err)
	}
}
