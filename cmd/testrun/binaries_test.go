package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConfigKey: flags that only change how tests run share the folder of the binaries; flags
// and settings that change the binary do not.
func TestConfigKey(t *testing.T) {
	t.Setenv("GOFLAGS", "-trimpath")
	base := configKey([]string{"-race", "-count=1", "-timeout", "25m", "-p", "4"})
	for _, same := range [][]string{
		{"-race"},
		{"-race", "-run", "^TestX$", "-skip=Y", "-v", "-parallel", "8", "-short", "-failfast"},
	} {
		if k := configKey(same); k != base {
			t.Errorf("configKey(%q) = %s, want %s (the same binaries)", same, k, base)
		}
	}
	for _, other := range [][]string{
		{"-count=1"},
		{"-race", "-tags", "replicas"},
		{"-race", "-ldflags=-w"},
	} {
		if k := configKey(other); k == base {
			t.Errorf("configKey(%q) = the -race run's key: a different binary shares its folder", other)
		}
	}
	t.Setenv("GOFLAGS", "-trimpath -ldflags=-w")
	if k := configKey([]string{"-race"}); k == base {
		t.Error("a different GOFLAGS kept the key")
	}
}

// TestGoTestRuns_OneNamePerFolder: packages of the same name (the three httpapi) go to different
// go tests and folders, each package always to the same folder whatever else is tested, and the
// flags are passed on with -o naming the folder.
func TestGoTestRuns_OneNamePerFolder(t *testing.T) {
	dir := t.TempDir()
	all := []string{"-race", "-count=1", "-p", "4", module + "/impl/surfaces/auth/httpapi", module + "/impl/surfaces/brands/httpapi", module + "/impl/surfaces/orders/httpapi", module + "/impl/kit/web"}
	runs, err := goTestRuns(all, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d go tests for three packages named httpapi: %q", len(runs), runs)
	}
	folderOf := map[string]string{}
	for i, r := range runs {
		if !slices.Equal(r[:4], []string{"-race", "-count=1", "-p", "4"}) {
			t.Errorf("run %d: flags %q, want the caller's first", i, r)
		}
		o := slices.Index(r, "-o")
		if o < 0 || !strings.HasPrefix(r[o+1], dir) {
			t.Fatalf("run %d: %q names no folder under %s", i, r, dir)
		}
		if i > 0 && !slices.Contains(r[:o], "1") {
			t.Errorf("run %d: %q: a later group runs one package at a time", i, r)
		}
		names := map[string]bool{}
		for _, p := range r[o+2:] {
			if names[filepath.Base(p)] {
				t.Errorf("run %d: two packages named %s", i, filepath.Base(p))
			}
			names[filepath.Base(p)] = true
			folderOf[p] = r[o+1]
		}
	}
	runs, err = goTestRuns([]string{"-race", module + "/impl/surfaces/orders/httpapi"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := runs[0][slices.Index(runs[0], "-o")+1]; got != folderOf[module+"/impl/surfaces/orders/httpapi"] {
		t.Errorf("orders' httpapi alone links into %s, with the others into %s", got, folderOf[module+"/impl/surfaces/orders/httpapi"])
	}
	if runs, err := goTestRuns([]string{"-c", "-o", "x.test", "./testdata/sample"}, dir); err != nil || runs != nil {
		t.Errorf("with -o of the caller's: %q, %v; want go test as given", runs, err)
	}
	if runs, err := goTestRuns([]string{"-cover", "-coverprofile=c.out", "./..."}, dir); err != nil || runs != nil {
		t.Errorf("with one -coverprofile for the run: %q, %v; want go test as given (one go test writes it)", runs, err)
	}
}

// TestRun_KeepsTestBinaries: a second run of an unchanged package runs the binary the first linked
// (go test -x shows no link); a run holding the folder makes a second one link its own.
func TestRun_KeepsTestBinaries(t *testing.T) {
	cache := t.TempDir()
	inMakeTest(t, cache)
	// -x: go test reports the commands it runs (as build output in its -json events), the
	// linker's among them.
	args := []string{"-x", "-count=1", "./testdata/sample"}
	linked := func() bool {
		t.Helper()
		events := filepath.Join(t.TempDir(), "events.json")
		if code := run(args, 3, 0, events); code != 0 {
			t.Fatalf("exit %d", code)
		}
		raw, err := os.ReadFile(events)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(raw), "/link -o ")
	}
	if !linked() {
		t.Fatal("the first run shows no link (go test -x)")
	}
	if _, err := os.Stat(filepath.Join(cache, configKey(args[:2]), "g0", "sample.test")); err != nil {
		t.Fatalf("no kept test binary: %v", err)
	}
	if linked() {
		t.Error("the second run linked the unchanged test binary again")
	}

	_, release, ok := binDir(configKey(args[:2]))
	if !ok {
		t.Fatal("the folder is not free after the runs")
	}
	defer release()
	if _, _, ok := binDir(configKey(args[:2])); ok {
		t.Error("a second run got the folder another run holds")
	}
	if !linked() {
		t.Error("a run beside one holding the folder shows no link of its own")
	}
}
