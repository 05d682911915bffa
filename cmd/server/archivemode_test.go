package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_ArchiveMode: `-mode archive` refuses a database without the migrations, naming the
// fix; on a migrated one it moves the months older than ARCHIVE_HORIZON (here a grant 14 months
// old) to a folder with its manifest, leaving the balance provable by an opening row, and
// ARCHIVE_RESTORE puts that month back.
func TestServer_ArchiveMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.NewEmptyURL(t)
	dir := t.TempDir()
	archiveRun := func(extra ...string) error {
		return run(ctx, append([]string{"-log-level", "warn", "-mode", "archive", "-database-url", db}, extra...), nil)
	}
	if err := archiveRun("-archive-dir", dir); err == nil || !strings.Contains(err.Error(), "-mode migrate") {
		t.Fatalf("archive of an unmigrated database: %v, want the advice to run -mode migrate", err)
	}
	if err := run(ctx, []string{"-log-level", "warn", "-mode", "migrate", "-database-url", db}, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `
		SELECT partman.create_partition_time('public.order_ledger', ARRAY[date_trunc('month', now()) - interval '14 months']);
		WITH u AS (INSERT INTO order_users (username, password_hash, user_type, balance) VALUES ('old-timer', 'x', 'Customer', 5000) RETURNING id)
		INSERT INTO order_ledger (user_id, kind, amount, created_at) SELECT id, 'grant', 5000, date_trunc('month', now()) - interval '14 months' FROM u`); err != nil {
		t.Fatal(err)
	}
	ledger := func() (kinds string) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT string_agg(kind || ' ' || amount, ', ' ORDER BY id) FROM order_ledger`).Scan(&kinds); err != nil {
			t.Fatal(err)
		}
		return kinds
	}
	if err := archiveRun("-archive-dir", dir, "-archive-horizon", "8760h"); err != nil {
		t.Fatal(err)
	}
	folders, err := filepath.Glob(filepath.Join(dir, "order_ledger_p*", "manifest.json"))
	if err != nil || len(folders) != 1 {
		t.Fatalf("archive folders with a manifest: %v (%v), want the one month", folders, err)
	}
	if got := ledger(); got != "opening 5000" {
		t.Fatalf("ledger after the archive: %q, want the opening row alone", got)
	}
	if err := archiveRun("-archive-restore", filepath.Dir(folders[0])); err != nil {
		t.Fatal(err)
	}
	if got := ledger(); got != "grant 5000" {
		t.Fatalf("ledger after the restore: %q, want the grant back", got)
	}
	if _, err := os.Stat(folders[0]); err != nil {
		t.Fatalf("the archive is kept after a restore: %v", err)
	}
}
