// Command testrun runs `go test` for make test and says where the time went.
//
//	go run ./cmd/testrun [-top 10] -- -race -count=1 ./...
//
// Everything after -- is go test's. For the whole run it starts one PostgreSQL cluster (unless
// TRIAD_TEST_DATABASE_URL names a server already) and passes it in TRIAD_TEST_DATABASE_URL, which
// impl/testkit/dbtest honours, so each package makes its own databases on it instead of starting a
// cluster of its own; and it builds the server binary once, plain and (with -race) with the race
// detector, named in the variables impl/testkit/serverbin reads, so cmd/server's process tests, e2e
// and deploy share one build. It reads go test's -json events as they come and prints each
// package's outcome and the whole output of every failure, then the slowest packages and tests.
// It keeps the test binaries between runs (binaries.go), so go test links only those that changed.
// Its exit status is the first failing go test's.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/testkit/serverbin"
)

func main() {
	top := flag.Int("top", 10, "how many of the slowest packages and tests to list at the end")
	conns := flag.Int("max-connections", 600, "max_connections of the shared cluster: every package's servers and pools share it")
	events := flag.String("events", "", "also write go test's -json events to this file (for a later look at where the time went)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: testrun [flags] -- <go test arguments>")
		flag.PrintDefaults()
	}
	flag.Parse()
	os.Exit(run(flag.Args(), *top, *conns, *events))
}

// run sets up the shared cluster and binaries, runs go test with args and returns its exit status.
func run(args []string, top, conns int, events string) int {
	start := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "triad-testrun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 2
	}
	defer os.RemoveAll(work)
	env := os.Environ()
	if os.Getenv("TRIAD_TEST_DATABASE_URL") == "" {
		cluster, err := pgcluster.Start(ctx, filepath.Join(work, "pg"), pgcluster.Options{Ephemeral: true, MaxConnections: conns})
		if err != nil {
			fmt.Fprintln(os.Stderr, "testrun: starting PostgreSQL:", err)
			return 2
		}
		defer func() {
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "testrun: stopping PostgreSQL:", err)
			}
		}()
		env = append(env, "TRIAD_TEST_DATABASE_URL="+cluster.URL("postgres"))
		fmt.Printf("testrun: one PostgreSQL for the run (%s)\n", time.Since(start).Round(100*time.Millisecond))
	}
	runs := [][]string{args}
	flags, _ := splitArgs(args)
	keep := work // where the server binaries go: the kept folder when there is one
	if dir, release, ok := binDir(configKey(flags)); !ok {
		fmt.Println("testrun: another run holds the kept test binaries of this configuration: go test links its own")
	} else {
		defer release()
		if r, err := goTestRuns(args, dir); err != nil {
			fmt.Fprintln(os.Stderr, "testrun: go test links its own test binaries:", err)
		} else if r != nil {
			runs, keep = r, dir
			fmt.Printf("testrun: test binaries kept between runs in %s (go test links only those that changed)\n", dir)
		}
	}

	if runsServer(args) {
		start := time.Now()
		built, err := buildServer(keep, slices.Contains(args, "-race"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "testrun:", err)
			return 2
		}
		env = append(env, built...)
		if len(built) > 0 {
			fmt.Printf("testrun: the server binary built once for the run (%s)\n", time.Since(start).Round(100*time.Millisecond))
		} else {
			fmt.Printf("testrun: the server binary the environment names (%s)\n", serverbin.Env)
		}
	}

	var save *os.File
	if events != "" {
		if save, err = os.Create(events); err != nil {
			fmt.Fprintln(os.Stderr, "testrun:", err)
			return 2
		}
		defer save.Close()
	}
	// The groups after the first start once the first runs a test binary, when the packages they
	// share with it are compiled.
	lines := make(chan []byte, 64)
	first := make(chan struct{})
	var firstOnce sync.Once
	codes := make([]int, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i > 0 {
				select {
				case <-first:
				case <-ctx.Done():
				}
			}
			var started func()
			if i == 0 {
				started = func() { firstOnce.Do(func() { close(first) }) }
				defer started()
			}
			codes[i] = goTest(ctx, env, r, lines, started)
		}()
	}
	go func() { wg.Wait(); close(lines) }()
	sum := newSummary(os.Stdout)
	for l := range lines {
		if save != nil {
			save.Write(append(l, '\n'))
		}
		sum.line(l)
	}
	sum.report(top, time.Since(start))
	for _, c := range codes {
		if c != 0 {
			return c
		}
	}
	return 0
}

// goTest runs go test -json with args and sends each line of its output to lines; started, when
// set, is called at its first test binary's start. It returns go test's exit status.
func goTest(ctx context.Context, env, args []string, lines chan<- []byte, started func()) int {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	// On an interrupt go test gets SIGINT (as from a terminal) and time to stop its tests, whose
	// cleanups stop their servers, before the cluster is stopped under them.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testrun:", err)
		return 2
	}
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		l := slices.Clone(sc.Bytes())
		if started != nil && bytes.Contains(l, []byte(`"Action":"start"`)) {
			started()
			started = nil
		}
		lines <- l
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "testrun: go test:", err)
		return 2
	}
	return 0
}

// runsServer says whether a package go test is given (its arguments args) runs the server binary:
// whether serverbin is among the tests' dependencies. A run of packages that never start the
// binary (go test ./impl/...) then builds none; when the packages cannot be listed it says yes.
func runsServer(args []string) bool {
	flags, pkgs := splitArgs(args)
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	list := append(append([]string{"list", "-deps", "-test", "-f", "{{.ImportPath}}"}, tagsOf(flags)...), pkgs...)
	out, err := exec.Command("go", list...).Output()
	if err != nil {
		return true
	}
	return slices.Contains(strings.Fields(string(out)), serverbinPath)
}

// module is the repository's module path; serverbinPath the package that runs the server binary.
const (
	module        = "github.com/triadhq/triad"
	serverbinPath = module + "/impl/testkit/serverbin"
)

// buildServer builds the server binary into work, also with -race when race is set, unless the
// environment names them already, and returns the variables that name them.
func buildServer(work string, race bool) ([]string, error) {
	var env []string
	for _, b := range []struct {
		name string
		race bool
	}{{serverbin.Env, false}, {serverbin.RaceEnv, true}} {
		if os.Getenv(b.name) != "" || (b.race && !race) {
			continue
		}
		out := filepath.Join(work, "server")
		if b.race {
			out += "-race"
		}
		if err := serverbin.Compile(out, b.race); err != nil {
			return nil, err
		}
		env = append(env, b.name+"="+out)
	}
	return env, nil
}
