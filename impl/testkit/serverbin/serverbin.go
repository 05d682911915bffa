// Package serverbin gives tests the server binary (cmd/server) built once per run.
//
// A test run through cmd/testrun (make test) builds the binary once, with and without -race, and
// names the two files in TRIAD_TEST_SERVER_BIN and TRIAD_TEST_SERVER_BIN_RACE; every package that
// runs the binary (cmd/server's process tests, e2e, deploy) takes it from there. A package run on
// its own (go test ./e2e/) builds it itself, once per test process, beside the test binary: in go
// test's work folder, which go test removes afterwards.
package serverbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Env names the prebuilt binaries: plain and built with -race.
const (
	Env     = "TRIAD_TEST_SERVER_BIN"
	RaceEnv = "TRIAD_TEST_SERVER_BIN_RACE"
)

var (
	mu    sync.Mutex
	built = map[bool]string{}
)

// Path is the server binary, built with -race when race is set, for test t; the test fails when
// it cannot be built.
func Path(t testing.TB, race bool) string {
	t.Helper()
	p, err := Build(race)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Build returns the server binary, built with -race when race is set: the one the environment
// names (Env, RaceEnv), else one built now, once per process.
func Build(race bool) (string, error) {
	name := Env
	if race {
		name = RaceEnv
	}
	if p := os.Getenv(name); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("serverbin: %s=%s: %w", name, p, err)
		}
		return p, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[race]; ok {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(exe), "triad-server")
	if race {
		p += "-race"
	}
	if err := Compile(p, race); err != nil {
		return "", err
	}
	built[race] = p
	return p, nil
}

// Compile builds cmd/server into out, with -race when race is set. The plain build uses -trimpath,
// so that the packages it compiles are cached under keys that do not depend on the repository's
// folder: cmd/newsurface's check, which builds a copy of the repository with -trimpath, then
// compiles only what the scaffolded surface changes. The race build does not: it then shares its
// packages with go test -race's own compilation of the tests.
func Compile(out string, race bool) error {
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	} else {
		args = append(args, "-trimpath")
	}
	cmd := exec.Command("go", append(args, "./cmd/server")...)
	root, err := repoRoot()
	if err != nil {
		return err
	}
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("serverbin: go %v: %v\n%s", args, err, b)
	}
	return nil
}

// repoRoot is the module's root: the nearest folder above the working directory (a test's
// package folder) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("serverbin: no go.mod above the working directory")
		}
		dir = up
	}
}
