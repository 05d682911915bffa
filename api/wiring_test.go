package api_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triadhq/triad/api"
)

// root is the repository, seen from this package's folder.
const root = ".."

// TestWiring_EverySpecIsASurface: a spec in api/ is a surface only with the rest of its files, each
// of which the lists of surfaces find by its name: its generation recipe in gen/<name>api/ (which
// `make generate` runs), its TypeScript SDK entry in clients/ts/<name>/ (which the SDK build and its
// package exports pick up), its bundle in gen/openapi/, its document in docs/ and its mock port. A spec copied into api/
// without them fails here, naming each missing piece; `make new-surface NAME=x` writes them all.
// cmd/server's TestSurfaces_EverySpecIsMounted checks its registration line.
func TestWiring_EverySpecIsASurface(t *testing.T) {
	ports := map[int]string{}
	for _, name := range api.Names() {
		need := func(path, why string, contains ...string) {
			t.Helper()
			body, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Errorf("api/%s.yaml: %s is missing (%s; make new-surface NAME=%s writes it)", name, path, why, name)
				return
			}
			for _, c := range contains {
				if !strings.Contains(string(body), c) {
					t.Errorf("api/%s.yaml: %s does not contain %q (%s)", name, path, c, why)
				}
			}
		}
		gen := "gen/" + name + "api/"
		need(gen+"generate.go", "make generate runs its go:generate line", "package "+name+"api", "../openapi/"+name+".yaml")
		need("gen/openapi/"+name+".yaml", "the bundled spec: run make generate")
		need(gen+"cfg.yaml", "oapi-codegen's configuration", "package: "+name+"api")
		need(gen+"overlay.yaml", "the Go-only generation hints cfg.yaml applies")
		need(gen+name+"api.gen.go", "the generated server: run make generate")
		need("clients/ts/"+name+"/index.ts", "the SDK entry, exported as @triad/sdk/"+name)
		need("clients/ts/"+name+"/schema.d.ts", "the SDK types: run make generate")
		need("docs/"+name+".md", "the surface's documentation")
		port, err := api.MockPort(name)
		if err != nil {
			t.Error(err)
		} else if other, dup := ports[port]; dup {
			t.Errorf("api/%s.yaml and api/%s.yaml both take mock port %d", name, other, port)
		}
		ports[port] = name
	}
}
