package pgread_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// primaryAndStandby starts a primary and a streaming standby made from it by pg_basebackup -R,
// each on a socket in its own folder, with a table t on both.
func primaryAndStandby(t *testing.T) (primary, standby *pgxpool.Pool, stopStandby, stopPrimary func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(2*time.Minute))
	defer cancel()
	dir, err := os.MkdirTemp("", "triad-read-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p, err := pgcluster.Start(ctx, filepath.Join(dir, "p"), pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	primary = pool(t, p.URL("postgres"))
	// The ephemeral cluster commits without waiting for its WAL to be written, and a standby
	// receives only written WAL: commits wait for it here, as on a durable primary.
	for _, sql := range []string{"ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()", "CREATE TABLE t (id bigint PRIMARY KEY)"} {
		if _, err := primary.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	s, err := pgcluster.Start(ctx, filepath.Join(dir, "s"), pgcluster.Options{StandbyOf: p.URL("postgres")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return primary, pool(t, s.URL("postgres")), func() { _ = s.Stop() }, func() { _ = p.Stop() }
}

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func count(t *testing.T, p *pgxpool.Pool) (n int64) {
	t.Helper()
	if err := p.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReader_ReadsItsWritesFromTheStandby: every write committed on the primary before Pool is
// called is visible in the pool Pool returns, read after read, and most reads (of a caught-up
// standby) reach the standby; a paused replay sends them to the primary until it resumes; a
// stopped standby sends them to the primary at once.
func TestReader_ReadsItsWritesFromTheStandby(t *testing.T) {
	primary, standby, stop, _ := primaryAndStandby(t)
	r := pgread.New(primary, standby)
	ctx := context.Background()
	for i := int64(1); i <= 200; i++ {
		if _, err := primary.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
			t.Fatal(err)
		}
		if n := count(t, r.Pool(ctx)); n != i {
			t.Fatalf("after write %d the read saw %d rows", i, n)
		}
	}
	onStandby, onPrimary := r.Counts()
	t.Logf("200 reads each right after a write: %d on the standby, %d on the primary", onStandby, onPrimary)
	if onStandby == 0 {
		t.Fatal("no read reached the standby")
	}

	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Exec(ctx, "INSERT INTO t VALUES (1000)"); err != nil {
		t.Fatal(err)
	}
	s0, _ := r.Counts()
	if n := count(t, r.Pool(ctx)); n != 201 {
		t.Fatalf("with the replay paused the read saw %d rows, want 201 (from the primary)", n)
	}
	if s1, _ := r.Counts(); s1 != s0 {
		t.Fatal("a read went to a standby that lacks the last write")
	}
	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s1, _ := r.Counts(); s1 == s0; s1, _ = r.Counts() {
		if time.Now().After(deadline) {
			t.Fatal("reads did not return to the standby after its replay resumed")
		}
		if n := count(t, r.Pool(ctx)); n != 201 {
			t.Fatalf("read saw %d rows, want 201", n)
		}
		time.Sleep(10 * time.Millisecond)
	}

	stop()
	start := time.Now()
	for range 3 {
		var n int64
		err := r.Do(ctx, func(p *pgxpool.Pool) error { return p.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n) })
		if err != nil || n != 201 {
			t.Fatalf("a read with the standby stopped: %d rows, %v", n, err)
		}
	}
	if got := r.Pool(ctx); got != primary {
		t.Fatal("a stopped standby still gets reads")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("falling back from a stopped standby took %v", took)
	}
}

// TestReader_ServesFromTheStandbyWhileThePrimaryIsAway: with the primary stopped, reads go on from
// the standby instead of failing on the primary, and serve what the standby has: here, its replay
// paused, less than the primary last said it had (the documented cost while the primary is away).
func TestReader_ServesFromTheStandbyWhileThePrimaryIsAway(t *testing.T) {
	primary, standby, _, stopPrimary := primaryAndStandby(t)
	r := pgread.New(primary, standby)
	ctx := context.Background()
	insert := func(from, to int64) {
		for i := from; i <= to; i++ {
			if _, err := primary.Exec(ctx, "INSERT INTO t VALUES ($1)", i); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(1, 20)
	if n := count(t, r.Pool(ctx)); n != 20 {
		t.Fatalf("with the primary up the read saw %d rows, want 20", n)
	}
	for deadline := time.Now().Add(time.Minute); count(t, standby) != 20; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the standby did not replay the first 20 rows")
		}
	}
	if _, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	insert(21, 25)
	if n := count(t, r.Pool(ctx)); n != 25 {
		t.Fatalf("with the standby's replay paused the read saw %d rows, want 25 (from the primary)", n)
	}
	stopPrimary()
	s0, _ := r.Counts()
	for i := range 5 {
		var n int64
		err := r.Do(ctx, func(p *pgxpool.Pool) error { return p.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n) })
		if err != nil || n != 20 {
			t.Fatalf("read %d with the primary stopped: %d rows, %v; want the standby's 20", i, n, err)
		}
	}
	if s1, _ := r.Counts(); s1-s0 != 5 {
		t.Fatalf("%d of 5 reads with the primary stopped reached the standby", s1-s0)
	}
}
