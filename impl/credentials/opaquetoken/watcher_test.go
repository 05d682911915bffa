package opaquetoken_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/opaquetoken/watchertest"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// These tests run Tokens over a real surface's store (orders') on a database of their own, so the
// notifications come from the real trigger.

func TestMain(m *testing.M) { dbtest.Main(m) }

// store is orders' token store, counting the reads that reach it (a read not counted was served
// from the cache) and, when hold is set, pausing each read after the database answered until the
// test lets it go.
type store struct {
	opaquetoken.Table[orders.Principal]
	reads  atomic.Int64
	hold   atomic.Bool
	read   chan struct{} // a held read has its answer
	resume chan struct{} // let it return
}

func newStore(pool *pgxpool.Pool) *store {
	return &store{Table: orders.NewTokenStore(db.New(pool), nil), read: make(chan struct{}), resume: make(chan struct{})}
}

func (s *store) TokenOwner(ctx context.Context, hash []byte) (orders.Principal, time.Time, error) {
	s.reads.Add(1)
	p, exp, err := s.Table.TokenOwner(ctx, hash)
	if s.hold.Load() {
		s.read <- struct{}{}
		<-s.resume
	}
	return p, exp, err
}

func newTokens(t *testing.T, s *store) *opaquetoken.Tokens[orders.Principal] {
	t.Helper()
	tk, err := opaquetoken.New[orders.Principal](s, opaquetoken.Options{TTL: time.Hour, CacheFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func newUser(t *testing.T, pool *pgxpool.Pool, name string) orders.Principal {
	t.Helper()
	row, err := db.New(pool).CreateOrderUser(context.Background(), db.CreateOrderUserParams{Username: name, PasswordHash: "x", UserType: "Customer", Balance: 0})
	if err != nil {
		t.Fatal(err)
	}
	return orders.Principal{ID: row.ID, Username: row.Username, Type: orders.Customer}
}

// reads returns how many store reads f caused.
func (s *store) during(f func()) int64 {
	before := s.reads.Load()
	f()
	return s.reads.Load() - before
}

func resolve(t *testing.T, tk *opaquetoken.Tokens[orders.Principal], tok string) {
	t.Helper()
	if _, err := tk.Resolve(context.Background(), tok); err != nil {
		t.Fatalf("resolve: %v", err)
	}
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestTokens_CachesOnlyWhileLive: a Tokens caches only while its revocation source says it may
// (CacheFor alone caches nothing), and losing the source empties the cache.
func TestTokens_CachesOnlyWhileLive(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	s := newStore(pool)
	tk := newTokens(t, s)
	tok, err := tk.Issue(context.Background(), newUser(t, pool, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.during(func() { resolve(t, tk, tok); resolve(t, tk, tok) }); n != 2 {
		t.Fatalf("with no revocation source, 2 resolves read the store %d times, want 2", n)
	}
	opaquetoken.SetLive(tk, true)
	if n := s.during(func() { resolve(t, tk, tok); resolve(t, tk, tok); resolve(t, tk, tok) }); n != 1 {
		t.Fatalf("live, 3 resolves read the store %d times, want 1", n)
	}
	opaquetoken.SetLive(tk, false)
	if n := s.during(func() { resolve(t, tk, tok); resolve(t, tk, tok) }); n != 2 {
		t.Fatalf("after the source was lost, 2 resolves read the store %d times, want 2", n)
	}
	opaquetoken.SetLive(tk, true)
	issued, err := tk.Issue(context.Background(), newUser(t, pool, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.during(func() { resolve(t, tk, issued) }); n != 0 {
		t.Fatalf("a token just issued while live read the store %d times, want 0 (cached at issue)", n)
	}
}

// TestTokens_RevocationDuringReadIsNotCached: a store read that began before a revocation (or
// before the cache became live again) returns its answer but does not cache it, whichever
// revocation it was; without one the answer is cached (the check can fail).
func TestTokens_RevocationDuringReadIsNotCached(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	cases := []struct {
		name     string
		revoke   func(tk *opaquetoken.Tokens[orders.Principal], tok string)
		uncached bool
	}{
		{"nothing", func(*opaquetoken.Tokens[orders.Principal], string) {}, false},
		{"this token dropped", func(tk *opaquetoken.Tokens[orders.Principal], tok string) {
			opaquetoken.Drop(tk, opaquetoken.Hash(tok))
		}, true},
		{"another token dropped", func(tk *opaquetoken.Tokens[orders.Principal], _ string) {
			opaquetoken.Drop(tk, opaquetoken.Hash("another"))
		}, true},
		{"forgotten here", func(tk *opaquetoken.Tokens[orders.Principal], tok string) { tk.Forget(tok) }, true},
		{"flushed", func(tk *opaquetoken.Tokens[orders.Principal], _ string) { opaquetoken.Flush(tk) }, true},
		{"source lost and back", func(tk *opaquetoken.Tokens[orders.Principal], _ string) {
			opaquetoken.SetLive(tk, false)
			opaquetoken.SetLive(tk, true)
		}, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(pool)
			tk := newTokens(t, s)
			opaquetoken.SetLive(tk, true)
			tok, err := tk.IssueTo(context.Background(), s, newUser(t, pool, "user"+string(rune('a'+i))))
			if err != nil {
				t.Fatal(err)
			}
			s.hold.Store(true)
			done := make(chan error)
			go func() {
				_, err := tk.Resolve(context.Background(), tok)
				done <- err
			}()
			<-s.read // the database has answered; the answer is not cached yet
			c.revoke(tk, tok)
			s.hold.Store(false)
			s.resume <- struct{}{}
			if err := <-done; err != nil {
				t.Fatalf("the read in flight: %v", err)
			}
			n := s.during(func() { resolve(t, tk, tok) })
			if c.uncached && n != 1 {
				t.Errorf("the answer read before the revocation was cached (the next resolve read the store %d times, want 1)", n)
			}
			if !c.uncached && n != 0 {
				t.Errorf("with no revocation the answer was not cached (the next resolve read the store %d times, want 0)", n)
			}
		})
	}
}

// syncBuffer is a log destination the Watcher's goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// within polls cond every few milliseconds for at most 2 s and reports how long it took.
func within(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("%s: not within 2 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// TestWatcher_DropsDeletedTokens: deleting a token's row drops it from a cache at once and leaves
// the others cached; a malformed notification changes nothing; a TRUNCATE empties the cache.
func TestWatcher_DropsDeletedTokens(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	s := newStore(pool)
	tk := newTokens(t, s)
	w := opaquetoken.NewWatcher(pool, nil)
	opaquetoken.Watch(w, orders.TokenRevocationChannel, tk)
	watchertest.Run(t, w)
	alice, bob := newUser(t, pool, "alice"), newUser(t, pool, "bob")
	gone, kept := mustIssue(t, tk, alice), mustIssue(t, tk, bob)
	if n := s.during(func() { resolve(t, tk, gone); resolve(t, tk, kept) }); n != 0 {
		t.Fatalf("issued tokens read the store %d times, want 0 (cached)", n)
	}

	for _, payload := range []string{"", "zz", strings.Repeat("g", 64), strings.Repeat("a", 63), "**"} {
		exec(t, pool, "SELECT pg_notify($1, $2)", orders.TokenRevocationChannel, payload)
	}
	exec(t, pool, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	took := within(t, "the deleted token refused", func() bool {
		_, err := tk.Resolve(context.Background(), gone)
		return errors.Is(err, opaquetoken.ErrInvalid)
	})
	t.Logf("the deleted token was refused %v after the DELETE", took.Round(time.Millisecond))
	if n := s.during(func() { resolve(t, tk, kept) }); n != 0 {
		t.Fatalf("the other token read the store %d times after the DELETE and the malformed notifications, want 0 (still cached)", n)
	}

	exec(t, pool, "TRUNCATE order_tokens")
	within(t, "the truncated table's token refused", func() bool {
		_, err := tk.Resolve(context.Background(), kept)
		return errors.Is(err, opaquetoken.ErrInvalid)
	})
}

// TestWatcher_ExpiredRowsAreNotNotified: the hourly sweep's deletes of long-expired rows send
// nothing (the trigger skips them), while a row that expired a moment ago still notifies.
func TestWatcher_ExpiredRowsAreNotNotified(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	conn, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(context.Background(), "LISTEN "+orders.TokenRevocationChannel); err != nil {
		t.Fatal(err)
	}
	u := newUser(t, pool, "alice")
	for _, age := range []string{"1 hour", "10 minutes", "1 minute"} {
		_, h, _ := opaquetoken.Mint()
		exec(t, pool, "INSERT INTO order_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, now() - $3::interval)", h, u.ID, age)
	}
	n, err := orders.NewTokenStore(db.New(pool), nil).DeleteExpiredTokens(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("sweep deleted %d (%v), want 3", n, err)
	}
	got := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := conn.Conn().WaitForNotification(ctx)
		cancel()
		if err != nil {
			break
		}
		got++
	}
	if got != 1 {
		t.Fatalf("the sweep sent %d notifications, want 1 (the row expired a minute ago)", got)
	}
}

func mustIssue(t *testing.T, tk *opaquetoken.Tokens[orders.Principal], p orders.Principal) string {
	t.Helper()
	tok, err := tk.Issue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestWatcher_ReconnectsAfterKill kills the Watcher's session (found by its application_name):
// while it is down nothing is cached, so a token deleted meanwhile is refused at once; one warning
// is logged; once it has reconnected by itself, caching resumes.
func TestWatcher_ReconnectsAfterKill(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	s := newStore(pool)
	tk := newTokens(t, s)
	var logs syncBuffer
	w := opaquetoken.NewWatcher(pool, slog.New(slog.NewTextHandler(&logs, nil)))
	release := make(chan struct{})
	opaquetoken.HoldReconnects(w, release, 20*time.Millisecond)
	opaquetoken.Watch(w, orders.TokenRevocationChannel, tk)
	watchertest.Run(t, w)
	alice := newUser(t, pool, "alice")
	tok := mustIssue(t, tk, alice)
	if n := s.during(func() { resolve(t, tk, tok) }); n != 0 {
		t.Fatalf("read the store %d times, want 0 (cached)", n)
	}

	var killed int
	if err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name LIKE '% '||$1`, opaquetoken.WatcherApplicationName).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("killed %d sessions (%v), want the watcher's one", killed, err)
	}
	within(t, "the watcher notices", func() bool { return !w.Listening() })

	// Down: every resolve reads the store, and a token deleted now is refused at once.
	if n := s.during(func() { resolve(t, tk, tok); resolve(t, tk, tok) }); n != 2 {
		t.Fatalf("while down, 2 resolves read the store %d times, want 2", n)
	}
	exec(t, pool, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	if _, err := tk.Resolve(context.Background(), tok); !errors.Is(err, opaquetoken.ErrInvalid) {
		t.Fatalf("a token deleted while the watcher was down: %v, want refused at once", err)
	}
	fresh := mustIssue(t, tk, alice)
	if n := s.during(func() { resolve(t, tk, fresh); resolve(t, tk, fresh) }); n != 2 {
		t.Fatalf("while down, a fresh token read the store %d times in 2 resolves, want 2", n)
	}
	if w.Listening() {
		t.Fatal("the watcher reconnected while held")
	}

	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitListening(ctx); err != nil {
		t.Fatalf("the watcher did not reconnect: %v", err)
	}
	if n := s.during(func() { resolve(t, tk, fresh); resolve(t, tk, fresh); resolve(t, tk, fresh) }); n != 1 {
		t.Fatalf("back up, 3 resolves read the store %d times, want 1", n)
	}
	exec(t, pool, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	within(t, "a token deleted after the reconnect refused", func() bool {
		_, err := tk.Resolve(context.Background(), fresh)
		return errors.Is(err, opaquetoken.ErrInvalid)
	})
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("the outage logged %d warnings, want 1:\n%s", n, logs.String())
	}
}

// TestWatcher_WatchWhileRunning: a Tokens registered after the Watcher started (as the server
// builds its surfaces while the Watcher connects) starts caching once its channel is listened to,
// and a second one on a channel already listened to caches at once; both get the revocations.
func TestWatcher_WatchWhileRunning(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	w := opaquetoken.NewWatcher(pool, nil)
	watchertest.Run(t, w) // no channel yet
	s1, s2 := newStore(pool), newStore(pool)
	first, second := newTokens(t, s1), newTokens(t, s2)
	opaquetoken.Watch(w, orders.TokenRevocationChannel, first)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitListening(ctx); err != nil {
		t.Fatal(err)
	}
	opaquetoken.Watch(w, orders.TokenRevocationChannel, second)
	alice := newUser(t, pool, "alice")
	tok := mustIssue(t, first, alice)
	if n := s1.during(func() { resolve(t, first, tok) }); n != 0 {
		t.Fatalf("the Tokens registered while running read the store %d times, want 0 (cached)", n)
	}
	if n := s2.during(func() { resolve(t, second, tok); resolve(t, second, tok) }); n != 1 {
		t.Fatalf("the second Tokens on a listened channel read the store %d times in 2 resolves, want 1", n)
	}
	exec(t, pool, "DELETE FROM order_tokens WHERE user_id = $1", alice.ID)
	for _, tk := range []*opaquetoken.Tokens[orders.Principal]{first, second} {
		within(t, "the deleted token refused", func() bool {
			_, err := tk.Resolve(context.Background(), tok)
			return errors.Is(err, opaquetoken.ErrInvalid)
		})
	}
}
