package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/metrics"
)

// TestSurfaces_EverySpecIsMounted: every spec in api/ is a surface this server mounts, publishes
// at /openapi, lists in /docs and labels in its metrics, and every surface mounted has a spec. A
// spec copied into api/ without its registration line fails here, naming the line.
func TestSurfaces_EverySpecIsMounted(t *testing.T) {
	var mounted []string
	for _, s := range surfaces {
		mounted = append(mounted, s.name)
	}
	for _, name := range api.Names() {
		if !slices.Contains(mounted, name) {
			t.Errorf("api/%s.yaml has no surface in cmd/server: add its registration line to surfaces in main.go (docs/adding-a-surface.md)", name)
		}
	}
	for _, name := range mounted {
		if !slices.Contains(api.Names(), name) {
			t.Errorf("cmd/server mounts surface %q, which has no api/%s.yaml", name, name)
		}
	}
	if got := len(specNames); got != len(api.Names()) {
		t.Errorf("/openapi publishes %d documents, api/ holds %d", got, len(api.Names()))
	}
	urls := swaggerURLs()
	specs, err := publishedSpecs()
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	for i, name := range specNames {
		m.NameOperations(name, specs[i])
	}
	for i, name := range specNames {
		if !strings.Contains(urls, `"/openapi/`+name+`.yaml"`) {
			t.Errorf("/docs does not list %s: %s", name, urls)
		}
		for path := range specs[i].Paths.Map() {
			if got := m.Surface(path); got != name {
				t.Errorf("metrics label %s of api/%s.yaml surface %q, want %q (two specs share its first path segment?)", path, name, got, name)
			}
		}
	}
}
