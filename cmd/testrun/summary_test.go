package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A run's events: a passing package, a failing test with its output, a package whose test never
// finished (go test's timeout), a build failure; then the slowest lists and the failures by name.
func TestSummary_FailuresReadableAndSlowestListed(t *testing.T) {
	events := []string{
		`{"Action":"start","Package":"ex/fast"}`,
		`{"Action":"run","Package":"ex/fast","Test":"TestQuick"}`,
		`{"Action":"output","Package":"ex/fast","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}`,
		`{"Action":"pass","Package":"ex/fast","Test":"TestQuick","Elapsed":0.2}`,
		`{"Action":"pass","Package":"ex/fast","Elapsed":1.5}`,
		`{"Action":"run","Package":"ex/slow","Test":"TestBroken"}`,
		`{"Action":"output","Package":"ex/slow","Test":"TestBroken","Output":"    broken_test.go:12: got 2, want 3\n"}`,
		`{"Action":"fail","Package":"ex/slow","Test":"TestBroken/sub","Elapsed":4}`,
		`{"Action":"fail","Package":"ex/slow","Test":"TestBroken","Elapsed":40}`,
		`{"Action":"pass","Package":"ex/slow","Test":"TestLong","Elapsed":90}`,
		`{"Action":"output","Package":"ex/slow","Output":"FAIL\n"}`,
		`{"Action":"fail","Package":"ex/slow","Elapsed":95}`,
		`{"Action":"run","Package":"ex/hung","Test":"TestWaits"}`,
		`{"Action":"output","Package":"ex/hung","Test":"TestWaits","Output":"    waits_test.go:9: still waiting\n"}`,
		`{"Action":"output","Package":"ex/hung","Output":"panic: test timed out after 25m0s\n"}`,
		`{"Action":"fail","Package":"ex/hung","Elapsed":1500}`,
		`{"ImportPath":"ex/bad [ex/bad.test]","Action":"build-output","Output":"bad.go:3:1: syntax error\n"}`,
		`{"ImportPath":"ex/bad [ex/bad.test]","Action":"build-fail"}`,
		`go: some line not in JSON`,
	}
	var out bytes.Buffer
	s := newSummary(&out)
	for _, e := range events {
		s.line([]byte(e))
	}
	s.report(2, 3*time.Minute)
	got := out.String()
	for _, want := range []string{
		"ok   ex/fast 1.5s\n",
		"--- FAIL: TestBroken (ex/slow)\n    broken_test.go:12: got 2, want 3\n",
		"FAIL ex/slow\nFAIL\n",
		"--- unfinished: TestWaits (ex/hung)\n    waits_test.go:9: still waiting\n",
		"FAIL ex/hung\npanic: test timed out after 25m0s\n",
		"# ex/bad [ex/bad.test]: build failed\nbad.go:3:1: syntax error\n",
		"go: some line not in JSON\n",
		"The 2 slowest packages",
		"    1500.0s  fail ex/hung\n      95.0s  fail ex/slow\n",
		"The 2 slowest tests",
		"      90.0s  pass ex/slow TestLong\n      40.0s  fail ex/slow TestBroken\n",
		"3 packages, 3 tests in 3m0s\n",
		"FAILED (4):\n  ex/slow TestBroken\n  ex/slow\n  ex/hung\n  ex/bad [ex/bad.test] (build)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestQuick") || strings.Contains(got, "ex/fast 1.5s\n  ") {
		t.Errorf("a passing test's output or a package outside the slowest 2 was printed:\n%s", got)
	}
	if _, slow, _ := strings.Cut(got, "slowest tests"); strings.Contains(slow, "TestBroken/sub") {
		t.Errorf("a subtest was listed beside its test:\n%s", got)
	}
}
