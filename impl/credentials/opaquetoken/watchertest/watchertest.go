// Package watchertest runs an opaquetoken.Watcher for a test or benchmark, so that the token caches
// it feeds behave as in the server.
package watchertest

import (
	"context"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
)

// Run runs w until the test ends and waits until it listens on every channel registered so far
// (call it after the APIs that register with w are built); it fails the test after 10 s.
func Run(t testing.TB, w *opaquetoken.Watcher) {
	t.Helper()
	t.Cleanup(w.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitListening(ctx); err != nil {
		t.Fatalf("watchertest: the watcher does not listen: %v", err)
	}
}
