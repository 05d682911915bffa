package pgstate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

func count(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStore_Sweep: Sweep (what the server runs through impl/platform/sweep) deletes the expired
// used ids and messenger logins, counts them, and keeps the live ones.
func TestStore_Sweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := replicaPools(t, 1)[0]
	s := newStore(t, pool)
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	for id, until := range map[string]time.Time{"old": past, "new": future} {
		if _, err := s.Use(ctx, id, until); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, "tok-"+id, provider.TelegramLogin{Aud: "site", Expires: until}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want the 2 expired rows", n, err)
	}
	if u, l := count(t, pool, "auth_used_ids"), count(t, pool, "auth_telegram_logins"); u != 1 || l != 1 {
		t.Fatalf("left %d used ids and %d logins, want the live one of each", u, l)
	}
	if n, err := s.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second Sweep = %d, %v; want 0", n, err)
	}
}

// TestSessions_Sweep: Sweep forgets expired revocations in the table and in memory, and keeps the
// live ones refused.
func TestSessions_Sweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := replicaPools(t, 1)[0]
	newStore(t, pool) // creates the tables
	s := pgstate.NewSessions(pool, nil)
	if err := s.Revoke(ctx, "ended", time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke(ctx, "live", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !s.Revoked("ended") {
		t.Fatal("the expired revocation is not held before the sweep")
	}
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want the 1 expired row", n, err)
	}
	if n := count(t, pool, "auth_revoked_sessions"); n != 1 {
		t.Fatalf("%d rows left, want 1", n)
	}
	if !s.Revoked("live") || s.Revoked("ended") {
		t.Fatalf("in memory after Sweep: live %v, ended %v; want true, false", s.Revoked("live"), s.Revoked("ended"))
	}
}
