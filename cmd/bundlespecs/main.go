// Command bundlespecs writes each surface's self-contained spec, api/<name>.yaml with the shared
// components it uses copied in (api.Bundle), to <out>/<name>.yaml, and removes the bundles of
// surfaces that are gone. `make generate` runs it (the go:generate line of gen/openapi) before
// oapi-codegen and openapi-typescript read the bundles.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/triadhq/triad/api"
)

func main() {
	out := flag.String("out", ".", "the directory the bundles are written to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "bundlespecs:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	names := api.Names()
	for _, name := range names {
		body, err := api.Bundle(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name+".yaml"), body, 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(out, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !slices.Contains(names, strings.TrimSuffix(filepath.Base(f), ".yaml")) {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}
