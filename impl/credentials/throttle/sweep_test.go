package throttle_test

import (
	"context"
	"testing"

	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestThrottle_Sweep: Sweep (what the server runs through impl/platform/sweep) deletes every row
// whose window ended, past the query's batch of 1000, and keeps the rows still counting.
func TestThrottle_Sweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	if _, err := pool.Exec(ctx, `INSERT INTO login_throttle (key, attempts, expires_at)
		SELECT sha256(i::text::bytea), 1, now() - interval '1 minute' FROM generate_series(1, 2500) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO login_throttle (key, attempts, expires_at)
		VALUES (sha256('live'::bytea), 3, now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	l := throttle.New(pool, throttle.Options{})
	if n, err := l.Sweep(ctx); err != nil || n != 2500 {
		t.Fatalf("Sweep = %d, %v; want 2500", n, err)
	}
	var left int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM login_throttle").Scan(&left); err != nil || left != 1 {
		t.Fatalf("%d rows left (%v), want the live one", left, err)
	}
}
