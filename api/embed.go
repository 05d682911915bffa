// Package api holds the OpenAPI documents, the source of truth for the HTTP surfaces: api/<name>.yaml
// per surface and api/shared/components.yaml, the components they share (Bundle). FS is the
// bundled, self-contained documents (gen/openapi) the server publishes at /openapi/{name}.yaml.
//
// The documents are also the registry of surfaces: every api/<name>.yaml is the surface <name>
// (Names), and every list of surfaces in the repository (generation, lint, the SDK, /openapi,
// /docs, metrics labels, mock ports, the names and messages tests) is read from them. wiring_test.go
// fails, naming what is missing, when a spec is here without the rest of its surface.
package api

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/gen/openapi"
)

// Sources holds the specs as written: one <surface>.yaml per surface and SharedFile.
//
//go:embed *.yaml shared/components.yaml
var Sources embed.FS

// FS holds one <surface>.yaml per surface, bundled (Bundle): the documents served, generated from
// and tested, each self-contained. `make generate` writes them; make check-generated and
// TestBundles_AreFresh fail when one is stale.
var FS = openapi.FS

// Names returns the surfaces: the names of the specs in api/, sorted.
func Names() []string {
	files, err := fs.Glob(Sources, "*.yaml")
	if err != nil {
		panic(err) // only a malformed pattern fails
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(f, ".yaml")
	}
	slices.Sort(names)
	return names
}

// Spec returns the bundled document of surface name, as served.
func Spec(name string) ([]byte, error) { return FS.ReadFile(name + ".yaml") }

// MockPort is the port `make mock` serves surface name's examples on: the info.x-mock-port of its
// spec (scripts/mock.sh reads the same line).
func MockPort(name string) (int, error) {
	body, err := Spec(name)
	if err != nil {
		return 0, err
	}
	var doc struct {
		Info struct {
			MockPort int `json:"x-mock-port"`
		} `json:"info"`
	}
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return 0, fmt.Errorf("%s.yaml: %w", name, err)
	}
	if doc.Info.MockPort == 0 {
		return 0, fmt.Errorf("%s.yaml: info has no x-mock-port (the port make mock serves it on)", name)
	}
	return doc.Info.MockPort, nil
}

// Load parses the bundled document of surface name (with every operation,
// unlike a generated package's embedded copy, which leaves out those served by hand).
func Load(name string) (*openapi3.T, error) {
	body, err := Spec(name)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		return nil, fmt.Errorf("%s.yaml: %w", name, err)
	}
	return doc, nil
}
