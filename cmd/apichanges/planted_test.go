package main

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// at walks from n along keys: a mapping's key, or in a sequence "name=x", the parameter named x.
func at(t *testing.T, n *yaml.Node, keys ...string) *yaml.Node {
	t.Helper()
	for _, k := range keys {
		var next *yaml.Node
		if name, ok := strings.CutPrefix(k, "name="); ok && n.Kind == yaml.SequenceNode {
			for _, p := range n.Content {
				if v := get(p, "name"); v != nil && v.Value == name {
					next = p
				}
			}
		} else {
			next = get(n, k)
		}
		if next == nil {
			t.Fatalf("no %q", k)
		}
		n = next
	}
	return n
}

// put sets key of mapping m to the YAML value (flow style, e.g. "integer" or "{type: string}").
func put(t *testing.T, m *yaml.Node, key, value string) {
	t.Helper()
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v.Content[0]
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v.Content[0])
}

// drop removes key from mapping m.
func drop(t *testing.T, m *yaml.Node, key string) {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
	t.Fatalf("no %q to drop", key)
}

// onThePathItem declares brands' path parameter id of /api/brand/{id} on the path item instead of
// on each operation, as brands 2.0.0 was released.
func onThePathItem(t *testing.T, root *yaml.Node) {
	item := at(t, root, "paths", "/api/brand/{id}")
	for _, op := range []string{"get", "patch", "delete"} {
		params := at(t, item, op, "parameters")
		var keep []*yaml.Node
		for _, p := range params.Content {
			if k, err := parameterKey(root, p); err != nil || k != [2]string{"id", "path"} {
				keep = append(keep, p)
			}
		}
		if len(keep) == len(params.Content) {
			t.Fatalf("%s /api/brand/{id} declares no id", op)
		}
		params.Content = keep
	}
	put(t, item, "parameters", `[{$ref: "#/components/parameters/BrandID"}]`)
}

// TestBreaking_PlantedChanges plants one change at a time in a released bundle and checks the
// verdict of make breaking (its code, in process: one oasdiff run per case) and the bump the next
// release needs: ten breaking changes, each failing the check with its operations and oasdiff's
// rule named, and five that are not, each passing with the bump semver asks for and (but for
// wording) a changelog line.
func TestBreaking_PlantedChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, surface string
		release       func(t *testing.T, root *yaml.Node) // applied to the released copy (nil: none)
		plant         func(t *testing.T, root *yaml.Node)
		need          bump
		want          []string // in make breaking's failure, or in the changelog lines of a change that is not breaking
	}{
		{"a path parameter narrowed from string to integer, declared on the path item when released and on each operation now", "brands", onThePathItem, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "components", "parameters", "BrandID", "schema"), "type", "integer")
			for _, op := range []string{"patch", "delete"} {
				put(t, at(t, root, "paths", "/api/brand/{id}", op, "parameters", "name=id", "schema"), "type", "integer")
			}
		}, bumpMajor, []string{"GET /api/brand/{id}", "PATCH /api/brand/{id}", "DELETE /api/brand/{id}", "`id`", "request-parameter-type-changed"}},
		{"a path parameter moved to the operation given a maxLength", "brands", onThePathItem, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "paths", "/api/brand/{id}", "delete", "parameters", "name=id", "schema"), "maxLength", "8")
		}, bumpMajor, []string{"DELETE /api/brand/{id}", "request-parameter-max-length-set"}},
		{"a required response property removed", "orders", nil, func(t *testing.T, root *yaml.Node) {
			drop(t, at(t, root, "components", "schemas", "Order", "properties"), "createdAt")
			put(t, at(t, root, "components", "schemas", "Order"), "required", "[id, description, price, status, customerId]")
		}, bumpMajor, []string{"GET /orders/{id}", "`createdAt`", "response-required-property-removed"}},
		{"an operation removed", "orders", nil, func(t *testing.T, root *yaml.Node) {
			drop(t, at(t, root, "paths", "/orders/{id}"), "get")
		}, bumpMajor, []string{"GET /orders/{id}", "api-removed-without-deprecation"}},
		{"a required request property added", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "components", "schemas", "NewOrder", "properties"), "deadline", "{type: string, format: date}")
			put(t, at(t, root, "components", "schemas", "NewOrder"), "required", "[description, price, deadline]")
		}, bumpMajor, []string{"POST /orders", "`deadline`", "new-required-request-property"}},
		{"a path parameter's minimum raised", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "paths", "/users/{id}/orders", "get", "parameters", "name=id", "schema"), "minimum", "5")
		}, bumpMajor, []string{"GET /users/{id}/orders", "request-parameter-min-increased"}},
		{"a response property's type changed", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "components", "schemas", "Order", "properties", "id"), "type", "string")
			drop(t, at(t, root, "components", "schemas", "Order", "properties", "id"), "format")
		}, bumpMajor, []string{"GET /orders/{id}", "`id`", "response-property-type-changed"}},
		{"a required query parameter added", "orders", nil, func(t *testing.T, root *yaml.Node) {
			params := at(t, root, "paths", "/orders", "get", "parameters")
			var p yaml.Node
			if err := yaml.Unmarshal([]byte("{name: region, in: query, required: true, schema: {type: string}}"), &p); err != nil {
				t.Fatal(err)
			}
			params.Content = append(params.Content, p.Content[0])
		}, bumpMajor, []string{"GET /orders", "`region`", "new-required-request-parameter"}},
		{"a request property's maxLength lowered", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "components", "schemas", "NewOrder", "properties", "description"), "maxLength", "200")
		}, bumpMajor, []string{"POST /orders", "`description`", "request-property-max-length-decreased"}},
		{"a success status changed (201 to 200)", "orders", nil, func(t *testing.T, root *yaml.Node) {
			responses := at(t, root, "paths", "/orders", "post", "responses")
			for i := 0; i < len(responses.Content); i += 2 {
				if responses.Content[i].Value == "201" {
					responses.Content[i].Value = "200"
				}
			}
		}, bumpMajor, []string{"POST /orders", "`201`", "response-success-status-removed"}},

		{"a path parameter moved from the path item to its operations, each with its own description", "brands", onThePathItem, func(*testing.T, *yaml.Node) {}, bumpPatch, nil},
		{"a new error code", "brands", nil, func(t *testing.T, root *yaml.Node) {
			codes := at(t, root, "components", "schemas", "ErrorCode", "x-extensible-enum")
			codes.Content = append(codes.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "brand_sealed"})
		}, bumpMinor, []string{"components/schemas/ErrorCode", "added the value `brand_sealed` to the open list (x-extensible-enum) [open-list-value-added]"}},
		{"an optional response property added", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "components", "schemas", "Order", "properties"), "note", "{type: string}")
		}, bumpMinor, []string{"GET /orders/{id}", "`note`", "response-optional-property-added"}},
		{"an operation added", "orders", nil, func(t *testing.T, root *yaml.Node) {
			get := at(t, root, "paths", "/orders/{id}", "get")
			var op yaml.Node
			body, err := yaml.Marshal(get)
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(body, &op); err != nil {
				t.Fatal(err)
			}
			put(t, op.Content[0], "operationId", "getOrderAgain")
			put(t, at(t, root, "paths"), "/orders/{id}/again", "{}")
			at(t, root, "paths", "/orders/{id}/again").Content = []*yaml.Node{{Kind: yaml.ScalarNode, Value: "get"}, op.Content[0]}
		}, bumpMinor, []string{"GET /orders/{id}/again", "endpoint-added"}},
		{"wording only", "orders", nil, func(t *testing.T, root *yaml.Node) {
			put(t, at(t, root, "paths", "/orders/{id}", "get"), "description", "The order.")
		}, bumpPatch, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := checkout(t, tc.surface)
			// Both copies go through the same encoder, so the bytes differ only by what is planted.
			edit(t, r.path(releasedDir, tc.surface+".yaml"), func(root *yaml.Node) {
				if tc.release != nil {
					tc.release(t, root)
				}
			})
			edit(t, r.path(bundleDir, tc.surface+".yaml"), func(root *yaml.Node) { tc.plant(t, root) })
			c, err := r.compare(tc.surface)
			if err != nil {
				t.Fatal(err)
			}
			if c.need != tc.need {
				t.Errorf("the next release needs a %s bump, want %s; the changes: %+v", c.need, tc.need, c.changes)
			}
			var out strings.Builder
			failure := r.verdict(&out, c)
			if (failure != "") != (tc.need == bumpMajor) {
				t.Fatalf("make breaking: %q (want a failure: %v)\n%s", failure, tc.need == bumpMajor, out.String())
			}
			text := section(c.released.raise(c.need), c.released, r.today, c.changes)
			if failure != "" {
				text = failure
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q is not named in\n%s", w, text)
				}
			}
		})
	}
}

// TestOperationParameters: a path item's parameters are declared on each of its operations, an
// operation's own declaration of the same name and location (through a $ref or not) wins, and
// the path item keeps none.
func TestOperationParameters(t *testing.T) {
	root, err := parseDoc("t.yaml", []byte(`
openapi: 3.0.3
paths:
  /things/{id}:
    parameters:
      - {$ref: "#/components/parameters/ID"}
      - {name: q, in: query, schema: {type: string}}
    get:
      responses: {"200": {description: ok}}
    put:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: q, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
    description: not an operation
components:
  parameters:
    ID: {name: id, in: path, required: true, schema: {type: string}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := operationParameters(root); err != nil {
		t.Fatal(err)
	}
	item := at(t, root, "paths", "/things/{id}")
	if get(item, "parameters") != nil {
		t.Error("the path item still declares parameters")
	}
	declared := func(op string) (out []string) {
		for _, p := range at(t, item, op, "parameters").Content {
			k, err := parameterKey(root, p)
			if err != nil {
				t.Fatal(err)
			}
			s := k[1] + ":" + k[0]
			if ref := get(p, "$ref"); ref != nil {
				s += "(ref)"
			}
			out = append(out, s)
		}
		return out
	}
	if got := strings.Join(declared("get"), " "); got != "path:id(ref) query:q" {
		t.Errorf("get declares %s", got)
	}
	if got := strings.Join(declared("put"), " "); got != "query:q path:id header:q" {
		t.Errorf("put declares %s", got)
	}
}
