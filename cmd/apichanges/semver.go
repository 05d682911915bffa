package main

import (
	"fmt"
	"strconv"
	"strings"
)

// version is a semantic version without pre-release or build parts: what info.version of a spec
// and the SDK's package.json hold.
type version struct{ major, minor, patch int }

// parseVersion reads MAJOR.MINOR.PATCH.
func parseVersion(s string) (version, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH (semver)", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || (len(p) > 1 && p[0] == '0') {
			return version{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH (semver)", s)
		}
		n[i] = v
	}
	return version{n[0], n[1], n[2]}, nil
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

// less orders versions by precedence.
func (v version) less(w version) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

// bump is the kind of change between two releases, in semver's terms.
type bump int

const (
	bumpNone  bump = iota // the documents are the same
	bumpPatch             // only wording (descriptions, examples) changed
	bumpMinor             // the API grew or changed compatibly
	bumpMajor             // a breaking change
)

func (b bump) String() string {
	return [...]string{"none", "patch", "minor", "major"}[b]
}

// raise returns v raised as b requires (a major bump also from 0.x: 0.1.0 becomes 1.0.0).
func (v version) raise(b bump) version {
	switch b {
	case bumpMajor:
		return version{v.major + 1, 0, 0}
	case bumpMinor:
		return version{v.major, v.minor + 1, 0}
	case bumpPatch:
		return version{v.major, v.minor, v.patch + 1}
	}
	return v
}

// atLeast returns the greater of v and w.
func atLeast(v, w version) version {
	if v.less(w) {
		return w
	}
	return v
}
