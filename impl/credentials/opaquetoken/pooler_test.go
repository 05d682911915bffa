package opaquetoken_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/opaquetoken/watchertest"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func poolOf(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestWatcher_BehindTransactionPoolerSaysSoAndCachesNothing: through PgBouncer in transaction mode
// (Debian's, default settings) the session connects (without the keepalives PgBouncer refuses) and
// its LISTEN succeeds but hears nothing. The Watcher finds that out from its probe, warns, and never
// makes the cache live: a token deleted through the pooler is refused at once, each request asking
// the database. Before the probe, the cache went live and served the revoked token for a minute.
func TestWatcher_BehindTransactionPoolerSaysSoAndCachesNothing(t *testing.T) {
	t.Parallel()
	pooled := poolOf(t, dbtest.Bouncer(t, dbtest.NewURL(t)))
	s := newStore(pooled)
	tk := newTokens(t, s)
	var logs syncBuffer
	w := opaquetoken.NewWatcher(pooled, slog.New(slog.NewTextHandler(&logs, nil)))
	opaquetoken.Watch(w, orders.TokenRevocationChannel, tk)
	t.Cleanup(w.Start())
	// The probe waits 3 s for its notification before the Watcher concludes.
	for start := time.Now(); !strings.Contains(logs.String(), "LISTEN hears nothing"); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no warning that LISTEN hears nothing within 10 s; log:\n%s", logs.String())
		}
	}
	if w.Listening() {
		t.Fatal("the Watcher says it listens through a transaction-mode pooler")
	}
	alice := newUser(t, pooled, "alice")
	tok := mustIssue(t, tk, alice)
	if n := s.during(func() { resolve(t, tk, tok); resolve(t, tk, tok) }); n != 2 {
		t.Fatalf("two resolves read the store %d times, want 2 (nothing cached)", n)
	}
	exec(t, pooled, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	if _, err := tk.Resolve(context.Background(), tok); !errors.Is(err, opaquetoken.ErrInvalid) {
		t.Fatalf("the deleted token resolved: %v", err)
	}
}

// TestWatcher_DirectSessionBesidePooledPool: with its session on a direct connection and the pool
// through the pooler, the Watcher listens, caches, and hears a revocation committed through the
// pooler within the second.
func TestWatcher_DirectSessionBesidePooledPool(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	pooled := poolOf(t, dbtest.Bouncer(t, url))
	direct := poolOf(t, url)
	s := newStore(pooled)
	tk := newTokens(t, s)
	w := opaquetoken.NewSessionWatcher(direct.Config().ConnConfig, pooled, nil)
	opaquetoken.Watch(w, orders.TokenRevocationChannel, tk)
	watchertest.Run(t, w)
	alice := newUser(t, pooled, "alice")
	tok := mustIssue(t, tk, alice)
	if n := s.during(func() { resolve(t, tk, tok) }); n != 0 {
		t.Fatalf("the issued token read the store %d times, want 0 (cached)", n)
	}
	exec(t, pooled, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	took := within(t, "the deleted token refused", func() bool {
		_, err := tk.Resolve(context.Background(), tok)
		return errors.Is(err, opaquetoken.ErrInvalid)
	})
	if took > time.Second {
		t.Errorf("refused %v after the DELETE, want within 1 s", took)
	}
}
