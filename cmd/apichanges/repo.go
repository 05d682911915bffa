package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The files apichanges reads and writes, relative to the repository's root.
const (
	specDir      = "api"           // api/<surface>.yaml: the specs as written (info.version is set here)
	bundleDir    = "gen/openapi"   // gen/openapi/<surface>.yaml: the bundles compared
	releasedDir  = "api/released"  // api/released/<surface>.yaml: each bundle as last released
	changelogDir = "api/changelog" // api/changelog/<surface>.md: each surface's changelog, newest first
	sdkPackage   = "clients/ts/package.json"
	sdkReleased  = "api/released/sdk-version" // the SDK's version at the last release
)

// repo is one checkout: where it is, how to run oasdiff, and the date a release is stamped with.
type repo struct {
	root    string
	oasdiff []string
	today   string
}

func (r repo) path(parts ...string) string {
	return filepath.Join(append([]string{r.root}, parts...)...)
}

// surfaces returns the surfaces: one per api/<name>.yaml (package api's Names, read from disk so
// a checkout under test is read, not the one compiled in).
func (r repo) surfaces() ([]string, error) {
	files, err := filepath.Glob(r.path(specDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no specs in %s", r.path(specDir))
	}
	return names, nil
}

// change is one entry of oasdiff's changelog (its JSON format).
type change struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"` // 3 breaking (ERR), 2 a warning, 1 information
	Operation string `json:"operation"`
	Path      string `json:"path"`
	Section   string `json:"section"`
}

const levelBreaking = 3

// notAChange are oasdiff's findings about info.version itself (its versioning policy), not about
// the API: apichanges sets the version from the changes (version) and checks it (breaking), so
// counting these would make a version raised by too little look like a change of its own.
var notAChange = map[string]bool{
	"api-version-not-bumped":       true,
	"api-version-decreased":        true,
	"api-major-version-not-bumped": true,
}

// changes lists what changed from the released bundle of surface to its current bundle:
// oasdiff's changelog of the two, each first given its path items' parameters on its operations
// (operationParameters), and the values added to or removed from open lists (openListChanges).
func (r repo) changes(surface string) ([]change, error) {
	if len(r.oasdiff) == 0 {
		return nil, fmt.Errorf("no oasdiff command")
	}
	dir, err := os.MkdirTemp("", "apichanges-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var docs [2]*yaml.Node
	for i, p := range []string{r.path(releasedDir, surface+".yaml"), r.path(bundleDir, surface+".yaml")} {
		body, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if docs[i], err = parseDoc(p, body); err != nil {
			return nil, err
		}
		flat, _ := parseDoc(p, body) // a second tree, to rewrite
		if err := operationParameters(flat); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out, err := encodeDoc(flat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".yaml"), out, 0o644); err != nil {
			return nil, err
		}
	}
	args := append(slices.Clone(r.oasdiff[1:]), "changelog", "--format", "json",
		filepath.Join(dir, "0.yaml"), filepath.Join(dir, "1.yaml"))
	cmd := exec.Command(r.oasdiff[0], args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("oasdiff changelog %s: %w\n%s", surface, err, stderr.Bytes())
	}
	var all []change
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &all); err != nil {
			return nil, fmt.Errorf("oasdiff changelog %s: %w", surface, err)
		}
	}
	var cs []change
	for _, c := range all {
		if !notAChange[c.ID] {
			cs = append(cs, c)
		}
	}
	return append(cs, openListChanges(docs[0], docs[1])...), nil
}

// infoVersion is the info.version of the OpenAPI document at path: the first indented line
// "version: X" under "info:", as every spec here writes it (info's other keys come before it or
// hold no nested version).
func infoVersion(path string) (version, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return version{}, err
	}
	_, v, err := findInfoVersion(body)
	if err != nil {
		return version{}, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

var infoVersionLine = regexp.MustCompile(`(?m)^[ \t]+version:[ \t]*["']?([^"'\s]+)["']?[ \t]*$`)

// findInfoVersion returns the byte span of info.version's value in a YAML document and the version.
func findInfoVersion(body []byte) ([2]int, version, error) {
	info := regexp.MustCompile(`(?m)^info:\s*$`).FindIndex(body)
	if info == nil {
		return [2]int{}, version{}, fmt.Errorf("no top-level info:")
	}
	m := infoVersionLine.FindSubmatchIndex(body[info[1]:])
	if m == nil {
		return [2]int{}, version{}, fmt.Errorf("no info.version line")
	}
	span := [2]int{info[1] + m[2], info[1] + m[3]}
	v, err := parseVersion(string(body[span[0]:span[1]]))
	return span, v, err
}

// setInfoVersion rewrites info.version of the document at path, leaving the rest as written.
func setInfoVersion(path string, v version) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	span, _, err := findInfoVersion(body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out := slices.Concat(body[:span[0]], []byte(v.String()), body[span[1]:])
	return os.WriteFile(path, out, 0o644)
}

// withoutVersion is a bundle with its info.version blanked, to tell a wording change (patch) from
// none.
func withoutVersion(body []byte) []byte {
	span, _, err := findInfoVersion(body)
	if err != nil {
		return body
	}
	return slices.Concat(body[:span[0]], body[span[1]:])
}

// required is the bump semver requires for cs, given whether the documents differ at all.
func required(cs []change, differ bool) bump {
	b := bumpNone
	if differ {
		b = bumpPatch
	}
	for _, c := range cs {
		if c.Level >= levelBreaking {
			return bumpMajor
		}
		b = bumpMinor
	}
	return b
}

// compared is one surface's comparison with its release.
type compared struct {
	surface           string
	released, current version
	changes           []change
	need              bump
	unreleased        bool // a surface with no release yet (api/released/ has no copy)
}

// compare reads surface's released and current bundles and what changed between them.
func (r repo) compare(surface string) (compared, error) {
	c := compared{surface: surface}
	relPath, curPath := r.path(releasedDir, surface+".yaml"), r.path(bundleDir, surface+".yaml")
	cur, err := os.ReadFile(curPath)
	if err != nil {
		return c, err
	}
	rel, err := os.ReadFile(relPath)
	if os.IsNotExist(err) {
		// A new surface: nobody consumes it yet, its first release is its current version.
		c.unreleased = true
		_, c.current, err = findInfoVersion(cur)
		c.released, c.need = c.current, bumpMinor
		return c, err
	}
	if err != nil {
		return c, err
	}
	if _, c.released, err = findInfoVersion(rel); err != nil {
		return c, fmt.Errorf("%s: %w", relPath, err)
	}
	if _, c.current, err = findInfoVersion(cur); err != nil {
		return c, fmt.Errorf("%s: %w", curPath, err)
	}
	if c.changes, err = r.changes(surface); err != nil {
		return c, err
	}
	c.need = required(c.changes, !bytes.Equal(withoutVersion(rel), withoutVersion(cur)))
	return c, nil
}

func (c compared) breaking() []change {
	var out []change
	for _, ch := range c.changes {
		if ch.Level >= levelBreaking {
			out = append(out, ch)
		}
	}
	return out
}
