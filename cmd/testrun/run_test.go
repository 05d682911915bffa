package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/serverbin"
)

// TestRun_ExitStatusAndEvents runs go test through run on a small package, with the cluster and
// the binaries named in the environment (as a run inside make test has them, so none is started or
// built): its exit status is go test's, and -events keeps every event.
func TestRun_ExitStatusAndEvents(t *testing.T) {
	inMakeTest(t, t.TempDir())
	events := filepath.Join(t.TempDir(), "events.json")
	if code := run([]string{"-count=1", "./testdata/sample"}, 3, 0, events); code != 0 {
		t.Fatalf("a passing package: exit %d, want 0", code)
	}
	raw, err := os.ReadFile(events)
	if err != nil || !strings.Contains(string(raw), `"Test":"TestSample"`) || !strings.Contains(string(raw), `"Action":"pass"`) {
		t.Fatalf("events kept: %v\n%s", err, raw)
	}
	t.Setenv("TESTRUN_SAMPLE_FAIL", "1")
	if code := run([]string{"-count=1", "./testdata/sample"}, 3, 0, ""); code != 1 {
		t.Fatalf("a failing package: exit %d, want go test's 1", code)
	}
}

// TestRunsServer: the packages that run the server binary (through serverbin) get it built, the
// others do not, and a package list go cannot read builds it to be safe.
func TestRunsServer(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-race", "-count=1", module + "/impl/kit/screen"}, false},
		{[]string{"-race", "-p", "4", "../../impl/testkit/patience/", module + "/deploy"}, true},
		{[]string{"-count=1", "-tags", "replicas", "-skip", "^(A|B)$", "../../e2e/"}, true},
		{[]string{"./no/such/package/"}, true},
	} {
		if got := runsServer(c.args); got != c.want {
			t.Errorf("runsServer(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// inMakeTest sets the environment a run inside make test has: a cluster and the server binaries
// named (so run starts and builds none), and cache as the folder of kept test binaries.
func inMakeTest(t *testing.T, cache string) {
	t.Helper()
	t.Setenv("TRIAD_TEST_DATABASE_URL", "postgres://unused")
	bin := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverbin.Env, bin)
	t.Setenv(serverbin.RaceEnv, bin)
	t.Setenv("TRIAD_TEST_BIN_CACHE", cache)
}
