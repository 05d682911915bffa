package serverbin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild_TakesTheRunsBinary: a binary the environment names is used as it is (no build), a
// named file that is missing is an error naming the variable, and the repository is found from a
// package's folder.
func TestBuild_TakesTheRunsBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(RaceEnv, bin)
	if got, err := Build(true); err != nil || got != bin {
		t.Fatalf("Build(race) with %s set: %q, %v; want %q", RaceEnv, got, err, bin)
	}
	t.Setenv(Env, filepath.Join(t.TempDir(), "gone"))
	if _, err := Build(false); err == nil || !strings.Contains(err.Error(), Env) {
		t.Fatalf("Build with %s naming a missing file: %v, want an error naming the variable", Env, err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "server", "main.go")); err != nil {
		t.Fatalf("repoRoot %s holds no cmd/server: %v", root, err)
	}
}
