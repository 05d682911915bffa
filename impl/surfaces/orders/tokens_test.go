package orders_test

import (
	"context"
	"crypto/sha256"
	"errors"
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

func newUser(t *testing.T, q *db.Queries) orders.Principal {
	t.Helper()
	row, err := q.CreateOrderUser(context.Background(), db.CreateOrderUserParams{Username: "alice", PasswordHash: "x", UserType: "Customer", Balance: 50000})
	if err != nil {
		t.Fatal(err)
	}
	return orders.Principal{ID: row.ID, Username: row.Username, Type: orders.Customer}
}

// clock is a settable clock for opaquetoken.Options.Now.
type clock struct{ ns atomic.Int64 }

func newClock() *clock                   { c := &clock{}; c.ns.Store(time.Now().UnixNano()); return c }
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func tokens(t *testing.T, q *db.Queries, o opaquetoken.Options) *opaquetoken.Tokens[orders.Principal] {
	t.Helper()
	tk, err := opaquetoken.New(orders.NewTokenStore(q, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestTokenStore_StoresOnlyTheHash(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	s := tokens(t, q, opaquetoken.Options{TTL: time.Hour, CacheFor: time.Minute})
	p := newUser(t, q)
	tok, err := s.Issue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := pool.QueryRow(context.Background(), "SELECT token_hash FROM order_tokens").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(tok))
	if string(stored) != string(sum[:]) {
		t.Fatal("the table does not hold the token's SHA-256")
	}
	// A fresh Tokens (another server process) resolves the token from the database.
	got, err := tokens(t, q, opaquetoken.Options{TTL: time.Hour}).Resolve(context.Background(), tok)
	if err != nil || got.ID != p.ID || got.Type != orders.Customer || got.Username != "alice" {
		t.Fatalf("resolve from the database: %+v %v", got, err)
	}
	// Change one character, to one it surely is not (a fixed replacement would sometimes equal it).
	changed := "A"
	if tok[0] == 'A' {
		changed = "B"
	}
	for _, bad := range []string{changed + tok[1:], tok + "A", "", "x"} {
		if _, err := s.Resolve(context.Background(), bad); !errors.Is(err, opaquetoken.ErrInvalid) {
			t.Fatalf("%q resolved: %v", bad, err)
		}
	}
}

// watched registers s with a Watcher of its own on pool (one replica's) and waits until s caches.
func watched(t *testing.T, pool *pgxpool.Pool, s *opaquetoken.Tokens[orders.Principal]) {
	t.Helper()
	w := opaquetoken.NewWatcher(pool, nil)
	opaquetoken.Watch(w, orders.TokenRevocationChannel, s)
	watchertest.Run(t, w)
}

func TestTokenStore_ExpiryHoldsInCacheAndDatabase(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	c := newClock()
	s := tokens(t, q, opaquetoken.Options{TTL: time.Hour, CacheFor: 2 * time.Hour, Now: c.now})
	watched(t, pool, s)
	tok, err := s.Issue(context.Background(), newUser(t, q))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	// Past expiry the cached entry must not serve it, although the caching period lasts longer.
	c.advance(time.Hour + time.Second)
	if _, err := pool.Exec(context.Background(), "UPDATE order_tokens SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(context.Background(), tok); !errors.Is(err, opaquetoken.ErrInvalid) {
		t.Fatalf("expired cached token: %v", err)
	}
	if _, err := tokens(t, q, opaquetoken.Options{TTL: time.Hour}).Resolve(context.Background(), tok); !errors.Is(err, opaquetoken.ErrInvalid) {
		t.Fatalf("expired stored token: %v", err)
	}
	n, err := s.Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("sweep removed %d: %v", n, err)
	}
}

// TestTokenStore_DeletedRowRevokesAtOnce: deleting a token's row revokes it on every replica at
// once, though each has it cached for hours: the table's trigger notifies orders'
// TokenRevocationChannel and each replica's Watcher drops it.
func TestTokenStore_DeletedRowRevokesAtOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	replicas := make([]*opaquetoken.Tokens[orders.Principal], 2)
	for i := range replicas {
		replicas[i] = tokens(t, q, opaquetoken.Options{TTL: 24 * time.Hour, CacheFor: 2 * time.Hour})
		watched(t, pool, replicas[i])
	}
	tok, err := replicas[0].Issue(context.Background(), newUser(t, q))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if _, err := r.Resolve(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(context.Background(), "DELETE FROM order_tokens"); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	for i, r := range replicas {
		for {
			_, err := r.Resolve(context.Background(), tok)
			if errors.Is(err, opaquetoken.ErrInvalid) {
				break
			}
			if time.Since(deleted) > 2*time.Second {
				t.Fatalf("replica %d still resolves the deleted token after 2 s: %v", i, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("both replicas refused the deleted token within %v", time.Since(deleted).Round(time.Millisecond))
}
