package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Test binaries kept between runs.
//
// go test caches compiled packages and test results, never a linked test binary: every run links
// every package's test binary again, 2-3 s of CPU for one of impl's race test binaries and more for
// cmd/server's and e2e's, a fifth of make test's CPU. Given -o, go test links into the place it
// names, and when the binary there already has the build ID of the one it would link (same
// sources, flags and toolchain: go's own up-to-date check), it runs that one without linking.
// testrun gives go test such a place: a folder per build configuration in the user's cache
// (binDir), which only the run holding its lock uses. A folder not used for a week is removed.
//
// A folder takes one test binary per name (go test -o dir/ writes <last element>.test), so the
// packages are split into groups of distinct names, one go test each (groupByName).

// runOnlyFlags are go test's flags that change how the tests run, not the binary (so not the
// folder): the value of each is the next argument unless given as -flag=value.
var runOnlyFlags = []string{"run", "skip", "count", "timeout", "parallel", "p", "shuffle", "cpu", "list",
	"bench", "benchtime", "fuzz", "fuzztime", "fuzzminimizetime", "outputdir", "exec"}

// runOnlyBools are go test's run-only flags without a value.
var runOnlyBools = []string{"v", "short", "failfast", "json", "fullpath", "benchmem"}

// keepLinking are flags under which testrun leaves go test as it is (one go test, no folder): they
// already name the binary's place or pass arguments through, or name one file for the whole run
// (-coverprofile), which a go test per group would each write over.
var keepLinking = []string{"c", "o", "args", "coverprofile"}

// flagName is the name of a flag argument (-x, --x, -x=v), or "" for a non-flag.
func flagName(a string) string {
	if !strings.HasPrefix(a, "-") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	return name
}

// isPackage says whether a go test argument names packages (how make test and the docs write
// them: ./..., ./e2e/, ../x, the module's import paths).
func isPackage(a string) bool {
	return a == "." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasPrefix(a, module+"/") || a == module
}

// splitArgs splits go test's arguments into flags (in order, with their values) and packages.
func splitArgs(args []string) (flags, pkgs []string) {
	for _, a := range args {
		if isPackage(a) {
			pkgs = append(pkgs, a)
		} else {
			flags = append(flags, a)
		}
	}
	return flags, pkgs
}

// configKey names the build configuration of flags: the flags that change the binary, with the
// environment's build settings and the toolchain. Flags that only change how tests run do not count,
// so a -run of one test reuses the binaries of the whole run.
func configKey(flags []string) string {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, v := range []string{"GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOOS", "GOARCH", "CC", "CGO_CFLAGS", "CGO_LDFLAGS"} {
		fmt.Fprintf(h, "%s=%s\n", v, os.Getenv(v))
	}
	for i := 0; i < len(flags); i++ {
		name := flagName(flags[i])
		switch {
		case slices.Contains(runOnlyBools, name):
			continue
		case slices.Contains(runOnlyFlags, name):
			if !strings.Contains(flags[i], "=") {
				i++ // its value
			}
			continue
		}
		fmt.Fprintln(h, flags[i])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// tagsOf is the -tags flag of flags, as arguments for go list.
func tagsOf(flags []string) []string {
	for i, a := range flags {
		switch {
		case a == "-tags" && i+1 < len(flags):
			return []string{"-tags", flags[i+1]}
		case strings.HasPrefix(a, "-tags="):
			return []string{a}
		}
	}
	return nil
}

// groupByName lists the packages pkgs names and splits them into groups in which no two share a
// test binary's name. A package's group is its rank among the module's packages of its name (the
// first of each name in the first group, the second in the second...), so it keeps its folder
// whatever else a run tests.
func groupByName(flags, pkgs []string) ([][]string, error) {
	list := func(patterns ...string) ([]string, error) {
		out, err := exec.Command("go", append(append([]string{"list", "-f", "{{.ImportPath}}"}, tagsOf(flags)...), patterns...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("go list: %w%s", err, stderrOf(err))
		}
		return strings.Fields(string(out)), nil
	}
	all, err := list(module + "/...")
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	seen := map[string]int{}
	for _, p := range all {
		rank[p] = seen[path.Base(p)]
		seen[path.Base(p)]++
	}
	wanted, err := list(pkgs...)
	if err != nil {
		return nil, err
	}
	var groups [][]string
	for _, p := range wanted {
		n, ok := rank[p]
		if !ok { // not under the module's ./... (a testdata package): after those of its name
			n = seen[path.Base(p)]
			seen[path.Base(p)]++
		}
		for len(groups) <= n {
			groups = append(groups, nil)
		}
		groups[n] = append(groups[n], p)
	}
	return groups, nil // a group may be empty: the folders are numbered by rank
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// binRoot is where the folders are: TRIAD_TEST_BIN_CACHE, else the user's cache.
func binRoot() (string, error) {
	if d := os.Getenv("TRIAD_TEST_BIN_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "triad", "testbin"), nil
}

// staleAfter is how long a folder stays unused before a run removes it.
const staleAfter = 7 * 24 * time.Hour

// binDir locks and returns the folder of the configuration key, after removing the folders not used
// for staleAfter. The folder is the caller's until release. When another run holds it (two make
// tests side by side), or the cache cannot be used, ok is false: the caller then lets go test link
// as it always does.
func binDir(key string) (dir string, release func(), ok bool) {
	root, err := binRoot()
	if err != nil {
		return "", nil, false
	}
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			if info, err := os.Stat(filepath.Join(root, e.Name(), ".lock")); err == nil && time.Since(info.ModTime()) > staleAfter && e.Name() != key {
				removeUnlocked(filepath.Join(root, e.Name()))
			}
		}
	}
	dir = filepath.Join(root, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, false
	}
	f, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", nil, false
	}
	now := time.Now()
	_ = os.Chtimes(f.Name(), now, now)
	return dir, func() { f.Close() }, true
}

// lockFile opens path and takes its exclusive lock without waiting (closing the file releases it).
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// removeUnlocked removes a stale folder unless a run holds it.
func removeUnlocked(dir string) {
	f, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return
	}
	defer f.Close()
	os.RemoveAll(dir)
}

// goTestRuns is the go test command lines for args, one per group of packages, each linking into
// its group's folder under dir; nil when the arguments name the binary's place themselves (go test
// then runs as given). The groups after the first are small (the packages whose name an earlier
// group has): each runs its packages one at a time beside the first.
func goTestRuns(args []string, dir string) ([][]string, error) {
	flags, pkgs := splitArgs(args)
	for _, f := range flags {
		if slices.Contains(keepLinking, flagName(f)) {
			return nil, nil
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	groups, err := groupByName(flags, pkgs)
	if err != nil {
		return nil, err
	}
	var runs [][]string
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		out := filepath.Join(dir, fmt.Sprintf("g%d", i))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		run := slices.Clone(flags)
		if len(runs) > 0 {
			run = append(run, "-p", "1")
		}
		runs = append(runs, append(append(run, "-o", out+string(filepath.Separator)), g...))
	}
	return runs, nil
}
