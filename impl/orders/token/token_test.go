package token

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/orders"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func newUser(t *testing.T, q *db.Queries) orders.Principal {
	t.Helper()
	row, err := q.CreateOrderUser(context.Background(), db.CreateOrderUserParams{Username: "alice", PasswordHash: "x", UserType: "Customer", Balance: 50000})
	if err != nil {
		t.Fatal(err)
	}
	return orders.Principal{ID: row.ID, Username: row.Username, Type: orders.Customer}
}

func TestStore_StoresOnlyTheHash(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	s := NewStore(q, time.Hour)
	p := newUser(t, q)
	tok, err := s.Issue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 43 {
		t.Fatalf("token %q is not 256 bits of base64url", tok)
	}
	var stored []byte
	if err := pool.QueryRow(context.Background(), "SELECT hash FROM order_tokens").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(tok))
	if string(stored) != string(sum[:]) {
		t.Fatal("the table does not hold the token's SHA-256")
	}
	// A fresh store (another server process) resolves the token from the database.
	got, err := NewStore(q, time.Hour).Lookup(context.Background(), tok)
	if err != nil || got.ID != p.ID || got.Type != orders.Customer || got.Username != "alice" {
		t.Fatalf("lookup from the database: %+v %v", got, err)
	}
	// Change one character, to one it surely is not (a fixed replacement would sometimes equal it).
	changed := "A"
	if tok[0] == 'A' {
		changed = "B"
	}
	if _, err := s.Lookup(context.Background(), changed+tok[1:]); err != ErrInvalid {
		t.Fatalf("a changed token resolved: %v", err)
	}
}

func TestStore_ExpiryHoldsInCacheAndDatabase(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	q := db.New(pool)
	s := NewStore(q, time.Hour)
	clock := time.Now()
	s.now = func() time.Time { return clock }
	p := newUser(t, q)
	tok, err := s.Issue(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour + time.Second) // past expiry: the cached entry must not serve it
	if _, err := s.Lookup(context.Background(), tok); err != ErrInvalid {
		t.Fatalf("expired cached token: %v", err)
	}
	// The database refuses it too once its clock passes the expiry.
	if _, err := pool.Exec(context.Background(), "UPDATE order_tokens SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore(q, time.Hour).Lookup(context.Background(), tok); err != ErrInvalid {
		t.Fatalf("expired stored token: %v", err)
	}
	n, err := s.Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("sweep removed %d: %v", n, err)
	}
}
