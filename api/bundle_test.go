package api

import (
	"bytes"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	yaml "go.yaml.in/yaml/v3"
)

// TestBundles_AreFresh: the committed bundles (FS, gen/openapi) are what Bundle makes of api/ now,
// so the served document, the generated code and the SDK never lag behind an edit of a spec or of
// the shared components. make check-generated says the same; this says it in go test.
func TestBundles_AreFresh(t *testing.T) {
	for _, name := range Names() {
		want, err := Bundle(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatalf("gen/openapi/%s.yaml: %v (run make generate)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("gen/openapi/%s.yaml is stale: run make generate", name)
		}
	}
}

// TestBundles_SelfContained: every bundle loads with references to other files refused, and the
// shared ApiError.code resolves to the surface's own ErrorCode enum.
func TestBundles_SelfContained(t *testing.T) {
	for _, name := range Names() {
		doc, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		own := doc.Components.Schemas["ErrorCode"]
		code := doc.Components.Schemas["ApiError"].Value.Properties["code"]
		if own == nil || code == nil || code.Value != own.Value || len(Known(own.Value)) == 0 {
			t.Errorf("%s: ApiError.code does not resolve to the surface's ErrorCode enum", name)
		}
		if strings.Contains(mustSpec(t, name), SharedFile+"#") {
			t.Errorf("%s: the bundle still refers into %s", name, SharedFile)
		}
	}
}

func mustSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := Spec(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const testShared = `components:
  responses:
    Internal:
      description: internal
      content:
        application/json:
          schema: {$ref: "#/components/schemas/ApiError"}
  schemas:
    ApiError:
      type: object
      properties:
        code: {$ref: "#/components/schemas/ErrorCode"}
        details: {type: array, items: {$ref: "#/components/schemas/ErrorDetail"}}
    ErrorDetail:
      type: object
    Unused:
      type: string
`

// TestBundle_CopiesWhatIsUsed: a reference to a shared response brings it and, transitively, the
// schemas it refers to (not the unused ones); the copied ApiError.code points to the surface's
// ErrorCode; the surface's own text stays as written.
func TestBundle_CopiesWhatIsUsed(t *testing.T) {
	surface := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    get:
      responses:
        "500": {$ref: "shared/components.yaml#/components/responses/Internal"}
components:
  schemas:
    # the codes
    ErrorCode: {type: string, enum: [internal_error]}
`
	out, err := bundle("t.yaml", []byte(surface), []byte(testShared))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]map[string]map[string]map[string]string
		Components map[string]map[string]any
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if ref := doc.Paths["/x"]["get"]["responses"]["500"]["$ref"]; ref != "#/components/responses/Internal" {
		t.Errorf("ref = %q", ref)
	}
	for _, want := range []string{"responses.Internal", "schemas.ApiError", "schemas.ErrorDetail", "schemas.ErrorCode"} {
		section, n, _ := strings.Cut(want, ".")
		if doc.Components[section][n] == nil {
			t.Errorf("%s not copied:\n%s", want, out)
		}
	}
	if doc.Components["schemas"]["Unused"] != nil {
		t.Errorf("Unused copied:\n%s", out)
	}
	if !strings.Contains(string(out), "# the codes") {
		t.Errorf("the surface's comment is lost:\n%s", out)
	}
	spec, err := openapi3.NewLoader().LoadFromData(out)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Components.Schemas["ApiError"].Value.Properties["code"].Value.Enum[0] != "internal_error" {
		t.Error("ApiError.code does not resolve to the surface's ErrorCode")
	}
}

// TestBundle_RefusesAmbiguity: generation fails, naming the problem, when a surface defines a
// component the shared file defines, lacks its ErrorCode, refers to a shared component that does
// not exist, or names a shared component as if it were its own.
func TestBundle_RefusesAmbiguity(t *testing.T) {
	for _, c := range []struct{ name, components, ref, want string }{
		{"same name", "  schemas:\n    ErrorCode: {type: string}\n    ApiError: {type: object}\n", "responses/Internal", "components.schemas.ApiError is also defined in api/shared/components.yaml"},
		{"no ErrorCode", "  schemas:\n    Other: {type: string}\n", "responses/Internal", "components.schemas.ErrorCode is missing"},
		{"unknown", "  schemas:\n    ErrorCode: {type: string}\n", "responses/Nope", "does not define"},
		{"shared named as own", "  schemas:\n    ErrorCode: {type: string}\n    Wrap: {$ref: \"#/components/schemas/ApiError\"}\n", "responses/Internal", "ApiError is shared; refer to it as shared/components.yaml#/components/schemas/ApiError"},
	} {
		surface := "openapi: 3.0.3\npaths:\n  /x:\n    get:\n      responses:\n        \"500\": {$ref: \"shared/components.yaml#/components/" + c.ref + "\"}\ncomponents:\n" + c.components
		_, err := bundle("t.yaml", []byte(surface), []byte(testShared))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
	}
}
