package pgstate_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
)

// TestSessions_SharedByReplicas: a session revoked through one replica's Sessions is revoked on
// another's within a second, both when a token Watcher pushes it (LISTEN/NOTIFY) and with no
// listener at all (the read every SessionsPollEvery, the fallback while a listener is down); the
// revoking replica knows at once, and a revocation made before a replica started is read at its
// start.
func TestSessions_SharedByReplicas(t *testing.T) {
	t.Parallel()
	pools := replicaPools(t, 3)
	newStore(t, pools[0]) // creates the tables
	revoker := pgstate.NewSessions(pools[0], nil)
	t.Cleanup(revoker.Start())
	if err := revoker.Revoke(context.Background(), "before-start", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	pushed := pgstate.NewSessions(pools[1], nil)
	w := opaquetoken.NewWatcher(pools[1], slog.New(slog.DiscardHandler))
	opaquetoken.WatchCache(w, pgstate.SessionsChannel, pushed)
	t.Cleanup(w.Start())
	t.Cleanup(pushed.Start())
	polled := pgstate.NewSessions(pools[2], nil) // no listener
	t.Cleanup(polled.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitListening(ctx); err != nil {
		t.Fatal(err)
	}

	waitRevoked := func(s *pgstate.Sessions, id, name string) {
		t.Helper()
		start := time.Now()
		for !s.Revoked(id) {
			if time.Since(start) > time.Second {
				t.Fatalf("%s: %s not revoked after %v", name, id, time.Since(start))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitRevoked(pushed, "before-start", "the listening replica")
	waitRevoked(polled, "before-start", "the polling replica")
	if pushed.Revoked("alive") || polled.Revoked("alive") || revoker.Revoked("alive") {
		t.Fatal("a session nobody revoked reads as revoked")
	}
	if err := revoker.Revoke(context.Background(), "logged-out", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !revoker.Revoked("logged-out") {
		t.Fatal("the revoking replica does not know at once")
	}
	waitRevoked(pushed, "logged-out", "the listening replica")
	waitRevoked(polled, "logged-out", "the polling replica")
}
