package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail events name the package being built
}

// key names a package's or a test's stream of output.
type key struct{ pkg, test string }

// result is a package's or a top-level test's outcome and duration.
type result struct {
	pkg, test string
	action    string
	elapsed   float64
}

// summary reads go test's events as they come, prints what a reader needs while the run goes on
// (each package's outcome, the whole output of every failed test, package and build), and keeps
// the durations for the slowest lists at the end.
type summary struct {
	out      io.Writer
	output   map[key][]string // output not yet printed, per package and test
	build    map[string][]string
	packages []result
	tests    []result
	failed   []string // failed packages and tests, named as `go test -run` takes them
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[key][]string{}, build: map[string][]string{}}
}

// line takes one line of go test's standard output: an event, or a line go test printed as is.
func (s *summary) line(raw []byte) {
	var e event
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil || e.Action == "" {
		fmt.Fprintln(s.out, string(raw))
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		s.build[e.ImportPath] = append(s.build[e.ImportPath], e.Output)
	case "build-fail":
		fmt.Fprintf(s.out, "# %s: build failed\n%s", e.ImportPath, strings.Join(s.build[e.ImportPath], ""))
		s.failed = append(s.failed, e.ImportPath+" (build)")
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "pass", "skip":
		s.done(k, e)
		delete(s.output, k)
	case "fail":
		s.done(k, e)
		s.printFailure(k)
	}
}

// done records a finished package or top-level test, and prints a package's outcome line.
func (s *summary) done(k key, e event) {
	r := result{pkg: e.Package, test: e.Test, action: e.Action, elapsed: e.Elapsed}
	switch {
	case e.Test == "":
		s.packages = append(s.packages, r)
		if e.Action != "fail" {
			fmt.Fprintf(s.out, "%-4s %s %.1fs\n", map[string]string{"pass": "ok", "skip": "?"}[e.Action], e.Package, e.Elapsed)
		}
	case !strings.Contains(e.Test, "/"):
		s.tests = append(s.tests, r)
	}
}

// printFailure prints a failed test's whole output; for a failed package, its own output and that
// of its tests that never finished (a panic or go test's timeout stops them mid-way).
func (s *summary) printFailure(k key) {
	if k.test != "" {
		fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n%s", k.test, k.pkg, strings.Join(s.output[k], ""))
		delete(s.output, k)
		if !strings.Contains(k.test, "/") {
			s.failed = append(s.failed, k.pkg+" "+k.test)
		}
		return
	}
	var unfinished []string
	for o := range s.output {
		if o.pkg == k.pkg && o.test != "" {
			unfinished = append(unfinished, o.test)
		}
	}
	slices.Sort(unfinished)
	for _, t := range unfinished {
		fmt.Fprintf(s.out, "--- unfinished: %s (%s)\n%s", t, k.pkg, strings.Join(s.output[key{k.pkg, t}], ""))
		delete(s.output, key{k.pkg, t})
	}
	fmt.Fprintf(s.out, "FAIL %s\n%s", k.pkg, strings.Join(s.output[k], ""))
	delete(s.output, k)
	s.failed = append(s.failed, k.pkg)
}

// report prints the n slowest packages and top-level tests, then the failures again by name.
func (s *summary) report(n int, wall time.Duration) {
	slowest := func(title string, rs []result, name func(result) string) {
		rs = slices.Clone(rs)
		slices.SortStableFunc(rs, func(a, b result) int { return cmp.Compare(b.elapsed, a.elapsed) })
		fmt.Fprintf(s.out, "\n%s\n", title)
		for _, r := range rs[:min(n, len(rs))] {
			fmt.Fprintf(s.out, "  %8.1fs  %-4s %s\n", r.elapsed, r.action, name(r))
		}
	}
	slowest(fmt.Sprintf("The %d slowest packages (go test's wall time each; packages run side by side):", n), s.packages,
		func(r result) string { return r.pkg })
	slowest(fmt.Sprintf("The %d slowest tests (wall time, parallel ones overlapping):", n), s.tests,
		func(r result) string { return r.pkg + " " + r.test })
	fmt.Fprintf(s.out, "\n%d packages, %d tests in %s\n", len(s.packages), len(s.tests), wall.Round(time.Second))
	if len(s.failed) > 0 {
		fmt.Fprintf(s.out, "FAILED (%d):\n  %s\n", len(s.failed), strings.Join(s.failed, "\n  "))
	}
}
