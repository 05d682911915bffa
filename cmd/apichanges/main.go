// Command apichanges keeps the specs' consumers from being broken silently. It compares each
// bundled spec (gen/openapi/<surface>.yaml) with its last released version (api/released/) using
// oasdiff, pinned in tools/oasdiff/go.mod:
//
//	apichanges breaking   fails on a breaking change, naming it, unless info.version's major was
//	                      raised and the surface's changelog (api/changelog/<surface>.md) names it
//	                      (make breaking, part of make test)
//	apichanges release    bundles the specs as written, raises each spec's info.version as semver
//	                      requires for the changes since its release (and the SDK's version,
//	                      clients/ts/package.json, by the largest of them), bundles again, writes
//	                      each changed surface's changelog section and makes the bundles the
//	                      released ones (make release-specs, which then runs make generate)
//
// docs/specs.md, "Versions and breaking changes", is the procedure.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	oasdiff := flag.String("oasdiff", "go tool -modfile=tools/oasdiff/go.mod oasdiff", "the command that runs oasdiff")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: apichanges [-root dir] [-oasdiff cmd] breaking|release")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	r := repo{root: *root, oasdiff: direct(strings.Fields(*oasdiff)), today: time.Now().UTC().Format(time.DateOnly)}
	var err error
	switch flag.Arg(0) {
	case "breaking":
		err = r.breaking(os.Stdout)
	case "release":
		err = r.release(os.Stdout)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
