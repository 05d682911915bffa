package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/triadhq/triad/api"
)

// checkout copies what apichanges reads of this repository for the surfaces named into a fresh
// directory, each released as it is now, and returns a repo over it.
func checkout(t *testing.T, surfaces ...string) repo {
	t.Helper()
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	copyFile := func(from, to string) {
		t.Helper()
		body, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, to), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range surfaces {
		name := s + ".yaml"
		copyFile(filepath.Join(specDir, name), filepath.Join(specDir, name))
		copyFile(filepath.Join(bundleDir, name), filepath.Join(bundleDir, name))
		copyFile(filepath.Join(bundleDir, name), filepath.Join(releasedDir, name))
	}
	copyFile(filepath.Join(specDir, api.SharedFile), filepath.Join(specDir, api.SharedFile))
	copyFile(sdkPackage, sdkPackage)
	return repo{root: dst, oasdiff: oasdiff(src), today: "2026-01-02"}
}

// oasdiff is the pinned oasdiff as main runs it (direct), resolved once per test process.
var oasdiff = func() func(src string) []string {
	var once sync.Once
	var argv []string
	return func(src string) []string {
		once.Do(func() {
			argv = direct([]string{"go", "tool", "-modfile=" + filepath.Join(src, "tools/oasdiff/go.mod"), "oasdiff"})
		})
		return argv
	}
}()

// edit applies fn to the YAML document at path.
func edit(t *testing.T, path string, fn func(root *yaml.Node)) {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	fn(doc.Content[0])
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// child returns the value of key in mapping m.
func child(t *testing.T, m *yaml.Node, keys ...string) *yaml.Node {
	t.Helper()
	for _, k := range keys {
		found := false
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				m, found = m.Content[i+1], true
				break
			}
		}
		if !found {
			t.Fatalf("no %q", k)
		}
	}
	return m
}

// removeOrderCreatedAt removes the response property Order.createdAt from the orders document at
// path (its spec or its bundle).
func removeOrderCreatedAt(t *testing.T, path string) {
	edit(t, path, func(root *yaml.Node) {
		order := child(t, root, "components", "schemas", "Order")
		props := child(t, order, "properties")
		for i := 0; i+1 < len(props.Content); i += 2 {
			if props.Content[i].Value == "createdAt" {
				props.Content = append(props.Content[:i], props.Content[i+2:]...)
				break
			}
		}
		req := child(t, order, "required")
		for i, n := range req.Content {
			if n.Value == "createdAt" {
				req.Content = append(req.Content[:i], req.Content[i+1:]...)
				break
			}
		}
	})
}

// setBundleVersion sets info.version of surface's bundle (what make generate copies from api/).
func setBundleVersion(t *testing.T, r repo, surface string, v version) {
	t.Helper()
	if err := setInfoVersion(r.path(bundleDir, surface+".yaml"), v); err != nil {
		t.Fatal(err)
	}
}

// TestBreaking_NamesARemovedResponseProperty: with the specs as released, make breaking passes;
// with a response property removed it fails naming the property, the operations and what to do;
// a raised major alone does not accept it, a raised major with the changelog naming it does.
func TestBreaking_NamesARemovedResponseProperty(t *testing.T) {
	t.Parallel()
	r := checkout(t, "auth", "orders") // two, so a test sees that an unchanged one is not named
	var out strings.Builder
	if err := r.breaking(&out); err != nil {
		t.Fatalf("the released specs themselves: %v", err)
	}
	// A surface never released (a new one) has nothing to break.
	if err := os.Remove(r.path(releasedDir, "auth.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := r.breaking(&out); err != nil || !strings.Contains(out.String(), ": not released yet") {
		t.Fatalf("an unreleased surface: %v\n%s", err, out.String())
	}

	removeOrderCreatedAt(t, r.path(bundleDir, "orders.yaml"))
	err := r.breaking(&out)
	if err == nil {
		t.Fatal("a removed response property passed")
	}
	msg := err.Error()
	for _, want := range []string{"orders:", "GET /orders/{id}", "`createdAt`", "response-required-property-removed", "make release-specs", "api/orders.yaml"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not name %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "auth") {
		t.Errorf("a surface that did not change is named:\n%s", msg)
	}

	c, err := r.compare("orders")
	if err != nil {
		t.Fatal(err)
	}
	next := c.released.raise(bumpMajor)
	setBundleVersion(t, r, "orders", next)
	if err := r.breaking(&out); err == nil || !strings.Contains(err.Error(), "has no section \"## "+next.String()) {
		t.Fatalf("a raised major without a changelog: %v", err)
	}
	c, err = r.compare("orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := putSection(r.path(changelogDir, "orders.md"), "orders", next, section(next, c.released, r.today, c.changes)); err != nil {
		t.Fatal(err)
	}
	if err := r.breaking(&out); err != nil {
		t.Fatalf("a raised major with the changelog naming it: %v", err)
	}
}

// TestRelease_FromTheSpecsAsWritten is make release-specs (its code, in process) in a copy of
// two surfaces: orders with a response property removed from api/orders.yaml and its bundle left
// stale (no make generate since), brands released with its path parameter on the path item and
// now on each operation (wording only, what made a release on a clean clone fail). The release
// raises orders' major, brands' patch and the SDK's major, writes orders' changelog naming the
// change, after which make breaking passes, and a second release changes no file.
func TestRelease_FromTheSpecsAsWritten(t *testing.T) {
	t.Parallel()
	r := checkout(t, "brands", "orders")
	edit(t, r.path(releasedDir, "brands.yaml"), func(root *yaml.Node) { onThePathItem(t, root) })
	removeOrderCreatedAt(t, r.path(specDir, "orders.yaml"))
	orders, brands := mustVersion(t, r, releasedDir, "orders"), mustVersion(t, r, releasedDir, "brands")
	sdkBefore, err := r.sdkVersion()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := r.release(&out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []struct {
		dir, surface string
		v            version
	}{
		{specDir, "orders", orders.raise(bumpMajor)}, {bundleDir, "orders", orders.raise(bumpMajor)}, {releasedDir, "orders", orders.raise(bumpMajor)},
		{specDir, "brands", brands.raise(bumpPatch)}, {releasedDir, "brands", brands.raise(bumpPatch)},
	} {
		if v := mustVersion(t, r, want.dir, want.surface); v != want.v {
			t.Errorf("%s/%s.yaml: info.version %v, want %v\n%s", want.dir, want.surface, v, want.v, out.String())
		}
	}
	if sdk, _ := r.sdkVersion(); sdk != sdkBefore.raise(bumpMajor) {
		t.Errorf("the SDK is %v after a breaking change of orders, want %v", sdk, sdkBefore.raise(bumpMajor))
	}
	if body, _ := os.ReadFile(r.path(sdkReleased)); strings.TrimSpace(string(body)) != sdkBefore.raise(bumpMajor).String() {
		t.Errorf("%s holds %q", sdkReleased, body)
	}
	log, err := os.ReadFile(r.path(changelogDir, "orders.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec := sectionOf(string(log), orders.raise(bumpMajor))
	if !strings.Contains(sec, "**breaking:** removed the required property `createdAt`") || !strings.Contains(sec, "### GET /orders/{id}") {
		t.Errorf("the changelog's section does not name the change:\n%s", sec)
	}
	log, _ = os.ReadFile(r.path(changelogDir, "brands.md"))
	if sec := sectionOf(string(log), brands.raise(bumpPatch)); !strings.Contains(sec, "wording only") {
		t.Errorf("brands' changelog section:\n%s", sec)
	}
	if err := r.breaking(&out); err != nil {
		t.Fatalf("after the release: %v", err)
	}

	before := files(t, r.root)
	out.Reset()
	if err := r.release(&out); err != nil {
		t.Fatalf("a release with nothing to release: %v\n%s", err, out.String())
	}
	after := files(t, r.root)
	for name, body := range after {
		if before[name] != body {
			t.Errorf("a release with nothing to release changed %s\n%s", name, out.String())
		}
	}
}

// files reads every file under root.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		out[path] = string(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustVersion(t *testing.T, r repo, dir, surface string) version {
	t.Helper()
	v, err := infoVersion(r.path(dir, surface+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVersion_Semver: parsing refuses what is not MAJOR.MINOR.PATCH; raising follows semver.
func TestVersion_Semver(t *testing.T) {
	for _, bad := range []string{"1.0", "1.0.0-rc1", "01.0.0", "v1.0.0", ""} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	v, _ := parseVersion("1.2.3")
	for b, want := range map[bump]string{bumpNone: "1.2.3", bumpPatch: "1.2.4", bumpMinor: "1.3.0", bumpMajor: "2.0.0"} {
		if got := v.raise(b).String(); got != want {
			t.Errorf("1.2.3 raised %s: %s, want %s", b, got, want)
		}
	}
	if got := atLeast(version{3, 0, 0}, v.raise(bumpMajor)); got != (version{3, 0, 0}) {
		t.Errorf("a version already above what is needed was lowered to %v", got)
	}
}

// TestDirect_RunsTheToolItself: a `go tool` line becomes the cached binary and the line's own
// arguments, which run oasdiff as the line did; any other line stays as it is.
func TestDirect_RunsTheToolItself(t *testing.T) {
	line := []string{"go", "tool", "-modfile=" + filepath.Join("..", "..", "tools/oasdiff/go.mod"), "oasdiff", "--version"}
	got := direct(line)
	if len(got) != 2 || filepath.Base(got[0]) != "oasdiff" || got[1] != "--version" {
		t.Fatalf("direct(%q) = %q, want the oasdiff binary and --version", line, got)
	}
	want, err := exec.Command(line[0], line[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(got[0], got[1:]...).Output(); err != nil || string(out) != string(want) {
		t.Errorf("the binary printed %q (%v), the go tool line %q", out, err, want)
	}
	for _, other := range [][]string{{"oasdiff"}, {"/usr/local/bin/oasdiff", "--flag"}, {"go", "run", "x"}, {"go", "tool", "-n"}} {
		if got := direct(other); !slices.Equal(got, other) {
			t.Errorf("direct(%q) = %q, want it unchanged", other, got)
		}
	}
}
