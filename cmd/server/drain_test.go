package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_DrainsBeforeClosing: once told to stop, the server keeps serving for DRAIN_DELAY with
// /readyz at 503 from the first moment and Connection: close on every response, including those
// on connections opened before; then it stops. Before, /readyz stayed 200 until the listener
// closed, and idle keep-alive connections were closed under the balancer.
func TestServer_DrainsBeforeClosing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-log-level", "warn", "-mode", "dev",
			"-drain-delay", "1500ms", "-database-url", dbtest.NewURL(t)}, ready)
	}()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("/readyz"); r.StatusCode != http.StatusOK || r.Close {
		t.Fatalf("before the stop: /readyz %d, close %v", r.StatusCode, r.Close)
	}

	cancel() // what SIGTERM does
	stopped := time.Now()
	for r := get("/readyz"); r.StatusCode != http.StatusServiceUnavailable; r = get("/readyz") {
		if time.Since(stopped) > 500*time.Millisecond {
			t.Fatalf("/readyz still %d %v after the stop", r.StatusCode, time.Since(stopped))
		}
	}
	t.Logf("/readyz answered 503 %v after the stop", time.Since(stopped).Round(time.Millisecond))
	if r := get("/api/brand/list"); r.StatusCode != http.StatusOK || !r.Close {
		t.Fatalf("while draining: the API answered %d, Connection: close %v; want 200 with close", r.StatusCode, r.Close)
	}
	select {
	case err := <-done:
		t.Fatalf("the server stopped %v after the signal, before its drain delay: %v", time.Since(stopped), err)
	case <-time.After(time.Second):
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop after draining")
	}
}
