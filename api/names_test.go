package api_test

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// specs loads the three published documents as the server embeds them.
func specs(t *testing.T) map[string]*openapi3.T {
	t.Helper()
	out := map[string]*openapi3.T{}
	for _, name := range []string{"orders", "brands", "auth"} {
		body, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromData(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = doc
	}
	return out
}

// TestNames_OperationIDsUniqueAcrossSpecs: one client generated from all three specs (a frontend
// talking to every surface) gets one method per operationId, so two specs must never share one,
// not even in another letter case (generators change the case of the first letter).
func TestNames_OperationIDsUniqueAcrossSpecs(t *testing.T) {
	seen := map[string]string{}
	for name, doc := range specs(t) {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				where := name + ": " + method + " " + path
				if op.OperationID == "" {
					t.Errorf("%s has no operationId", where)
					continue
				}
				key := strings.ToLower(op.OperationID)
				if prev, ok := seen[key]; ok {
					t.Errorf("operationId %q of %s is already used by %s", op.OperationID, where, prev)
				}
				seen[key] = where
			}
		}
	}
}

// jsGlobals are names a TypeScript or JavaScript generator turns into a top-level declaration that
// would shadow the language's own (an `Error` interface hides the global Error class).
var jsGlobals = []string{"Array", "Boolean", "Date", "Error", "File", "Function", "Headers", "Map", "Number",
	"Object", "Promise", "Record", "Request", "Response", "Set", "String", "Symbol", "URL"}

// TestNames_NoSchemaShadowsABuiltin keeps component names clear of language built-ins.
func TestNames_NoSchemaShadowsABuiltin(t *testing.T) {
	for name, doc := range specs(t) {
		for schema := range doc.Components.Schemas {
			for _, g := range jsGlobals {
				if strings.EqualFold(schema, g) {
					t.Errorf("%s: schema %q shadows the built-in %s", name, schema, g)
				}
			}
		}
	}
}

// TestNames_NoGoExtensions: the published documents are for every reader and generator; Go-only
// hints (x-go-type, x-go-name, x-oapi-codegen-*) belong in gen/<surface>api/overlay.yaml.
func TestNames_NoGoExtensions(t *testing.T) {
	for _, name := range []string{"orders", "brands", "auth"} {
		body, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(body), "\n") {
			if strings.Contains(line, "x-go-") || strings.Contains(line, "x-oapi-codegen") {
				t.Errorf("%s.yaml:%d carries a Go generator hint: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestNames_RelativeServers: Swagger UI's Try it out and generated clients resolve paths against
// the servers entry, so it must be the serving host itself, not a fixed dev address.
func TestNames_RelativeServers(t *testing.T) {
	for name, doc := range specs(t) {
		if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
			t.Errorf("%s: servers = %v, want the single relative server /", name, doc.Servers)
		}
	}
}
