package pgcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The managed cluster must keep its data across a stop and a start in the same folder, which is what
// a second `make run` relies on.
func TestCluster_DataSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	c, err := Start(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := c.EnsureDatabase(ctx, "app"); err != nil {
		t.Fatalf("EnsureDatabase: %v", err)
	}
	execSQL(t, c.URL("app"), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')")
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid still present after Stop: the server did not stop (%v)", err)
	}

	c2, err := Start(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("second Start: %v", err)
	}
	t.Cleanup(func() { _ = c2.Stop() })
	if err := c2.EnsureDatabase(ctx, "app"); err != nil {
		t.Fatalf("EnsureDatabase on existing database: %v", err)
	}
	conn, err := pgx.Connect(ctx, c2.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "still here" {
		t.Fatalf("after restart: v=%q err=%v, want the row written before", v, err)
	}
}

// The cluster listens on its unix socket only: nothing in its configuration opens a TCP port.
func TestCluster_NoTCPListener(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := Start(ctx, filepath.Join(t.TempDir(), "pg"), Options{Ephemeral: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var listen string
	if err := conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if listen != "" {
		t.Fatalf("listen_addresses = %q, want empty (socket only)", listen)
	}
}

func TestFirstWithBinaries(t *testing.T) {
	t.Parallel()
	empty, full := t.TempDir(), t.TempDir()
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if err := os.WriteFile(filepath.Join(full, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := firstWithBinaries([]string{empty}); err != ErrNoBinaries {
		t.Fatalf("folder without binaries: err = %v, want ErrNoBinaries", err)
	}
	for _, hint := range []string{"apt-get install postgresql", "DATABASE_URL"} {
		if !strings.Contains(ErrNoBinaries.Error(), hint) {
			t.Errorf("ErrNoBinaries does not mention %q", hint)
		}
	}
	got, err := firstWithBinaries([]string{empty, full})
	if err != nil || got != full {
		t.Fatalf("firstWithBinaries = %q, %v; want %q", got, err, full)
	}
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}
