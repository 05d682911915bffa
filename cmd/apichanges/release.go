package main

import (
	"fmt"
	"io"
	"os"

	"github.com/triadhq/triad/api"
)

// release cuts a release of every spec: it bundles the specs as written (so a spec changed since
// the last make generate is what is compared, not its stale bundle), raises each info.version and
// the SDK's as the changes ask (version), bundles again so the bundles carry the new versions,
// then writes the changelog sections and makes the bundles the released ones (promote). With
// nothing changed since the release it changes nothing. make release-specs runs it, then make
// generate (the generated code and the SDK's types carry the versions too).
func (r repo) release(w io.Writer) error {
	if err := r.bundle(); err != nil {
		return err
	}
	if err := r.version(w); err != nil {
		return err
	}
	if err := r.bundle(); err != nil {
		return err
	}
	return r.promote(w)
}

// bundle writes gen/openapi/<surface>.yaml from api/ for every surface, as make generate's first
// step does (api.BundleFrom over this checkout's api/).
func (r repo) bundle() error {
	names, err := r.surfaces()
	if err != nil {
		return err
	}
	src := os.DirFS(r.path(specDir))
	for _, s := range names {
		body, err := api.BundleFrom(src, s)
		if err != nil {
			return fmt.Errorf("bundling %s: %w", s, err)
		}
		if err := os.WriteFile(r.path(bundleDir, s+".yaml"), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}
