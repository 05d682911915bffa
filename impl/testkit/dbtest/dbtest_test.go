package dbtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestMain tests dbtest's own private cluster, the one a package run alone starts, even under
// make test, whose one cluster (TRIAD_TEST_DATABASE_URL) every other package shares.
func TestMain(m *testing.M) {
	os.Unsetenv("TRIAD_TEST_DATABASE_URL")
	dbtest.Main(m)
}

// Each test must see a migrated database that no other test writes to.
func TestNew_IsolatedMigratedDatabases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := dbtest.New(t), dbtest.New(t)
	if _, err := a.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('k', 'a')"); err != nil {
		t.Fatalf("insert into a: %v", err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM platform_info").Scan(&n); err != nil {
		t.Fatalf("count in b: %v", err)
	}
	if n != 0 {
		t.Fatalf("database b sees %d rows written to database a", n)
	}
	if err := a.QueryRow(ctx, "SELECT count(*) FROM platform_info").Scan(&n); err != nil || n != 1 {
		t.Fatalf("database a: n=%d err=%v, want 1 row", n, err)
	}
}
