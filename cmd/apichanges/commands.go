package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// breaking fails when a bundle breaks its release: a breaking change, named, that neither a new
// major version with a changelog naming it accepts. It also fails when a version went backwards.
func (r repo) breaking(w io.Writer) error {
	names, err := r.surfaces()
	if err != nil {
		return err
	}
	var failed []string
	for _, s := range names {
		c, err := r.compare(s)
		if err != nil {
			return err
		}
		if msg := r.verdict(w, c); msg != "" {
			failed = append(failed, msg)
		}
	}
	if len(failed) > 0 {
		return errors.New("make breaking: " + strings.Join(failed, "\n"))
	}
	return nil
}

// verdict writes to w why surface c's bundle passes make breaking, or returns why it fails.
func (r repo) verdict(w io.Writer, c compared) string {
	s := c.surface
	if c.unreleased {
		fmt.Fprintf(w, "%s %s: not released yet (make release-specs releases it), so nothing to break\n", s, c.current)
		return ""
	}
	if c.current.less(c.released) {
		return fmt.Sprintf("%s: info.version %s is below the released %s (api/released/%s.yaml); versions only go up", s, c.current, c.released, s)
	}
	br := entries(c.breaking())
	if len(br) == 0 {
		next := "nothing to release"
		if c.need != bumpNone {
			next = fmt.Sprintf("semver asks for a %s bump at the next release", c.need)
		}
		fmt.Fprintf(w, "%s %s: no breaking change since the release %s (%d changes; %s)\n", s, c.current, c.released, len(c.changes), next)
		return ""
	}
	log, _ := os.ReadFile(r.path(changelogDir, s+".md"))
	sec := sectionOf(string(log), c.current)
	var unnamed []entry
	for _, e := range br {
		if !strings.Contains(sec, "### "+e.where+"\n") || !strings.Contains(sec, e.line) {
			unnamed = append(unnamed, e)
		}
	}
	if c.current.major > c.released.major && len(unnamed) == 0 {
		fmt.Fprintf(w, "%s %s: %d breaking changes since the release %s, accepted: the major version was raised and api/changelog/%s.md names them\n", s, c.current, len(br), c.released, s)
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d breaking change(s) against the released %s (api/released/%s.yaml), which clients generated from it may not survive:\n", s, len(br), c.released, s)
	for _, e := range br {
		fmt.Fprintf(&b, "  %s: %s\n", e.where, strings.TrimPrefix(e.line, "**breaking:** "))
	}
	if c.current.major > c.released.major {
		fmt.Fprintf(&b, "  The major version was raised (%s), but api/changelog/%s.md has no section \"## %s\" naming each of them.\n", c.current, s, c.current)
	}
	fmt.Fprintf(&b, "  Either make the change compatible (add instead of remove or rename; a new optional field, operation or code is not breaking),\n"+
		"  or ship it as a new major version: run `make release-specs` (it raises info.version in api/%s.yaml to %s,\n"+
		"  writes the changelog section naming these changes, promotes the specs and regenerates; commit the result).",
		s, c.released.raise(bumpMajor))
	return b.String()
}

// version raises each spec's info.version to what its changes since the release require (keeping
// a higher one already set) and the SDK's version by the largest of those changes.
func (r repo) version(w io.Writer) error {
	names, err := r.surfaces()
	if err != nil {
		return err
	}
	most := bumpNone
	for _, s := range names {
		c, err := r.compare(s)
		if err != nil {
			return err
		}
		most = max(most, c.need)
		if c.unreleased {
			fmt.Fprintf(w, "%s: first release, as %s\n", s, c.current)
			continue
		}
		want := atLeast(c.current, c.released.raise(c.need))
		if want != c.current {
			if err := setInfoVersion(r.path(specDir, s+".yaml"), want); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "%s: %s -> %s (%s: %d changes, %d breaking)\n", s, c.released, want, c.need, len(c.changes), len(c.breaking()))
	}
	sdk, err := r.sdkVersion()
	if err != nil {
		return err
	}
	rel, err := r.sdkReleased(sdk)
	if err != nil {
		return err
	}
	want := atLeast(sdk, rel.raise(most))
	if want != sdk {
		if err := r.setSDKVersion(want); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "sdk (%s): %s -> %s (%s)\n", sdkPackage, rel, want, most)
	return nil
}

// promote writes each surface's changelog section and copies the current bundles over the released
// ones. It refuses a surface whose version is not what its changes require (run version first).
func (r repo) promote(w io.Writer) error {
	names, err := r.surfaces()
	if err != nil {
		return err
	}
	var cs []compared
	for _, s := range names {
		c, err := r.compare(s)
		if err != nil {
			return err
		}
		if !c.unreleased && c.current.less(c.released.raise(c.need)) {
			return fmt.Errorf("%s: info.version %s, but its changes since %s need a %s bump: run make release-specs", s, c.current, c.released, c.need)
		}
		cs = append(cs, c)
	}
	for _, c := range cs {
		if c.need == bumpNone {
			fmt.Fprintf(w, "%s %s: unchanged since its release\n", c.surface, c.current)
			continue
		}
		sec := section(c.current, c.released, r.today, c.changes)
		if c.unreleased {
			sec = fmt.Sprintf("## %s (%s)\n\nThe first release.\n", c.current, r.today)
		}
		if err := putSection(r.path(changelogDir, c.surface+".md"), c.surface, c.current, sec); err != nil {
			return err
		}
		body, err := os.ReadFile(r.path(bundleDir, c.surface+".yaml"))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(r.path(releasedDir), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(r.path(releasedDir, c.surface+".yaml"), body, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %s released (from %s); api/changelog/%s.md has its section\n", c.surface, c.current, c.released, c.surface)
	}
	sdk, err := r.sdkVersion()
	if err != nil {
		return err
	}
	return os.WriteFile(r.path(sdkReleased), []byte(sdk.String()+"\n"), 0o644)
}

func (r repo) sdkVersion() (version, error) {
	body, err := os.ReadFile(r.path(sdkPackage))
	if err != nil {
		return version{}, err
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &pkg); err != nil {
		return version{}, fmt.Errorf("%s: %w", sdkPackage, err)
	}
	return parseVersion(pkg.Version)
}

// sdkReleased is the SDK's version at the last release; before the first, the current one.
func (r repo) sdkReleased(current version) (version, error) {
	body, err := os.ReadFile(r.path(sdkReleased))
	if os.IsNotExist(err) {
		return current, nil
	}
	if err != nil {
		return version{}, err
	}
	return parseVersion(strings.TrimSpace(string(body)))
}

var packageVersion = regexp.MustCompile(`(?m)^  "version": "[^"]*"`)

func (r repo) setSDKVersion(v version) error {
	path := r.path(sdkPackage)
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if packageVersion.Find(body) == nil {
		return fmt.Errorf("%s: no \"version\" line", sdkPackage)
	}
	out := packageVersion.ReplaceAll(body, []byte(`  "version": "`+v.String()+`"`))
	return os.WriteFile(path, out, 0o644)
}
