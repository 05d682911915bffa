package orders_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/opaquetoken"
	"github.com/triadhq/triad/impl/orders"
)

func newUser(t *testing.T, q *db.Queries) *orders.Principal {
	t.Helper()
	row, err := q.CreateOrderUser(context.Background(), db.CreateOrderUserParams{Username: "alice", PasswordHash: "x", UserType: "Customer", Balance: 50000})
	if err != nil {
		t.Fatal(err)
	}
	return &orders.Principal{ID: row.ID, Username: row.Username, Type: orders.Customer}
}

// clock is a settable clock for opaquetoken.Options.Now.
type clock struct{ ns atomic.Int64 }

func newClock() *clock                   { c := &clock{}; c.ns.Store(time.Now().UnixNano()); return c }
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func tokens(t *testing.T, q *db.Queries, o opaquetoken.Options) *opaquetoken.Tokens[*orders.Principal] {
	t.Helper()
	tk, err := opaquetoken.New(orders.NewTokenStore(q), o)
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
	if err := pool.QueryRow(context.Background(), "SELECT hash FROM order_tokens").Scan(&stored); err != nil {
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

func TestTokenStore_ExpiryHoldsInCacheAndDatabase(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	c := newClock()
	s := tokens(t, q, opaquetoken.Options{TTL: time.Hour, CacheFor: 2 * time.Hour, Now: c.now})
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

// Deleting a token's row revokes it on every replica once the caching period has passed.
func TestTokenStore_DeletedRowRevokesAfterCachePeriod(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	c := newClock()
	s := tokens(t, q, opaquetoken.Options{TTL: 24 * time.Hour, CacheFor: 5 * time.Second, Now: c.now})
	tok, err := s.Issue(context.Background(), newUser(t, q))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), "DELETE FROM order_tokens"); err != nil {
		t.Fatal(err)
	}
	c.advance(5 * time.Second)
	if _, err := s.Resolve(context.Background(), tok); !errors.Is(err, opaquetoken.ErrInvalid) {
		t.Fatalf("a deleted token still resolves after the caching period: %v", err)
	}
}
