package api_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// specs loads the published documents (one per surface) as the server embeds them.
func specs(t *testing.T) map[string]*openapi3.T {
	t.Helper()
	out := map[string]*openapi3.T{}
	for _, name := range api.Names() {
		doc, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
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
// hints (x-go-name, x-oapi-codegen-*, and x-go-type for the server's own convenience) belong in
// gen/<surface>api/overlay.yaml. One hint is published on purpose: `x-go-type: json.Number` on
// exact numbers (money, and the limit of an error detail), since without it every
// Go client generated from the served document with default options holds them as float32, and
// an overlay is applied only by this repository's own generation.
func TestNames_NoGoExtensions(t *testing.T) {
	exact := []string{"x-go-type: json.Number"}
	for _, file := range append(sourceFiles(), api.SharedFile) {
		body, err := api.Sources.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(body), "\n") {
			if slices.Contains(exact, strings.TrimSpace(line)) {
				continue
			}
			if strings.Contains(line, "x-go-") || strings.Contains(line, "x-oapi-codegen") {
				t.Errorf("api/%s:%d carries a Go generator hint: %s", file, i+1, strings.TrimSpace(line))
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

// enumKey identifies an enum by its values, in any order.
func enumKey(values []any) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = fmt.Sprint(v)
	}
	slices.Sort(out)
	return strings.Join(out, "\x00")
}

// TestNames_OneSchemaPerEnum: an enum written out in several places generates one type per place
// (three copies of the sort enum, one per list operation, before OrderSort), so each set of enum
// values is defined once per spec, as a component schema that the places using it reference. A
// reference to a component counts as the component, not as another copy.
func TestNames_OneSchemaPerEnum(t *testing.T) {
	for name, doc := range specs(t) {
		defined := map[string][]string{} // enum values → where they are written out
		var walk func(where string, ref *openapi3.SchemaRef)
		walk = func(where string, ref *openapi3.SchemaRef) {
			if ref == nil || ref.Value == nil {
				return
			}
			if ref.Ref != "" {
				return // a use of a component, walked once as the component
			}
			s := ref.Value
			if len(s.Enum) > 0 {
				k := enumKey(s.Enum)
				defined[k] = append(defined[k], where)
			}
			for prop, p := range s.Properties {
				walk(where+"/properties/"+prop, p)
			}
			walk(where+"/items", s.Items)
			for i, sub := range append(append(append(openapi3.SchemaRefs{}, s.OneOf...), s.AnyOf...), s.AllOf...) {
				walk(fmt.Sprintf("%s/of/%d", where, i), sub)
			}
		}
		for schema, ref := range doc.Components.Schemas {
			walk("#/components/schemas/"+schema, &openapi3.SchemaRef{Value: ref.Value})
		}
		params := func(where string, ps openapi3.Parameters) {
			for _, p := range ps {
				if p.Ref == "" && p.Value != nil {
					walk(where+" parameter "+p.Value.Name, p.Value.Schema)
				}
			}
		}
		for pname, p := range doc.Components.Parameters {
			if p.Value != nil {
				walk("#/components/parameters/"+pname, p.Value.Schema)
			}
		}
		for path, item := range doc.Paths.Map() {
			params(path, item.Parameters)
			for method, op := range item.Operations() {
				where := method + " " + path
				params(where, op.Parameters)
				if op.RequestBody != nil && op.RequestBody.Ref == "" && op.RequestBody.Value != nil {
					for mt, media := range op.RequestBody.Value.Content {
						walk(where+" body "+mt, media.Schema)
					}
				}
			}
		}
		for k, places := range defined {
			if len(places) > 1 {
				slices.Sort(places)
				t.Errorf("%s: the enum [%s] is written out %d times (%s): make it one component schema",
					name, strings.ReplaceAll(k, "\x00", ", "), len(places), strings.Join(places, "; "))
			}
		}
	}
	// The rule was made for the sort enum: it is one component, referenced by both list routes.
	orders := specs(t)["orders"]
	for _, path := range []string{"/orders", "/users/{id}/orders"} {
		op := orders.Paths.Find(path).Get
		found := false
		for _, p := range op.Parameters {
			if p.Value.Name == "sort" {
				found = p.Value.Schema.Ref == "#/components/schemas/OrderSort"
			}
		}
		if !found {
			t.Errorf("orders: GET %s's sort parameter does not reference OrderSort", path)
		}
	}
}

// TestNames_OneOfObjectsHaveADiscriminator: a generated client tells the variants of a oneOf of
// objects apart by a discriminator; without one, a TypeScript union of objects sharing a tag
// field cannot be narrowed and a Go client gets an opaque union. So a oneOf whose object variants
// all require one property (a tag such as `status`) declares it as its discriminator, each
// variant listed in the mapping. Variants with nothing required in common (the token endpoint's
// OAuthError or ApiError) are told apart by their required fields and need none. The auth login
// answer, the case this was made for, must be among the ones checked.
func TestNames_OneOfObjectsHaveADiscriminator(t *testing.T) {
	checkedLogin := false
	for name, doc := range specs(t) {
		check := func(where string, s *openapi3.Schema) {
			if len(s.OneOf) < 2 {
				return
			}
			var common map[string]bool
			for _, v := range s.OneOf {
				required, object := objectRequired(v.Value)
				if !object {
					return // a oneOf of other types (a number or a decimal string) has no tag
				}
				req := map[string]bool{}
				for r := range required {
					if common == nil || common[r] {
						req[r] = true
					}
				}
				common = req
			}
			d := s.Discriminator
			if len(common) == 0 && d == nil {
				return
			}
			if d == nil || d.PropertyName == "" {
				t.Errorf("%s: %s: a oneOf of objects that all require %v has no discriminator", name, where, common)
				return
			}
			if !common[d.PropertyName] {
				t.Errorf("%s: %s: discriminator %q is not required by every variant", name, where, d.PropertyName)
			}
			mapped := map[string]bool{}
			for _, ref := range d.Mapping {
				mapped[ref.Ref] = true
			}
			for _, v := range s.OneOf {
				if !mapped[v.Ref] {
					t.Errorf("%s: %s: variant %s is not in the discriminator's mapping", name, where, v.Ref)
				}
			}
			if name == "auth" && strings.Contains(where, "/login") {
				checkedLogin = true
			}
		}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for status, resp := range op.Responses.Map() {
					if resp.Value == nil {
						continue
					}
					for mt, media := range resp.Value.Content {
						if media.Schema != nil && media.Schema.Value != nil {
							check(fmt.Sprintf("%s %s %s %s", method, path, status, mt), media.Schema.Value)
						}
					}
				}
			}
		}
		for schema, ref := range doc.Components.Schemas {
			check("#/components/schemas/"+schema, ref.Value)
		}
	}
	if !checkedLogin {
		t.Error("the auth login answer (a oneOf told apart by status) was not found among the checked oneOfs")
	}
}

// objectRequired is the set of properties an object schema requires, through allOf, and whether
// it is an object at all.
func objectRequired(s *openapi3.Schema) (map[string]bool, bool) {
	if s == nil {
		return nil, false
	}
	required := map[string]bool{}
	object := s.Type.Is(openapi3.TypeObject)
	for _, r := range s.Required {
		required[r] = true
	}
	for _, part := range s.AllOf {
		req, obj := objectRequired(part.Value)
		object = object || obj
		for r := range req {
			required[r] = true
		}
	}
	return required, object
}

// TestNames_TokenFieldsAreFormOnly: each field of a request has one way to be sent, or generated
// clients take it twice (the token request's fields, once both query and form, gave six positional
// arguments). So no operation declares a parameter that is also a property of its request body;
// the token endpoint's fields are form fields only (its query form, kept for the original API's
// clients, is described in words, not declared).
func TestNames_TokenFieldsAreFormOnly(t *testing.T) {
	for name, doc := range specs(t) {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				if op.RequestBody == nil || op.RequestBody.Value == nil {
					continue
				}
				for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
					if p.Value == nil {
						continue
					}
					for mt, media := range op.RequestBody.Value.Content {
						if media.Schema == nil || media.Schema.Value == nil {
							continue
						}
						if _, dup := media.Schema.Value.Properties[p.Value.Name]; dup {
							t.Errorf("%s: %s %s: %s is both a %s parameter and a field of the %s body",
								name, method, path, p.Value.Name, p.Value.In, mt)
						}
					}
				}
			}
		}
	}
	op := specs(t)["orders"].Paths.Find("/oauth/token").Post
	for _, p := range op.Parameters {
		t.Errorf("orders: POST /oauth/token declares the %s parameter %s; its fields are form fields only", p.Value.In, p.Value.Name)
	}
	form := op.RequestBody.Value.Content.Get("application/x-www-form-urlencoded")
	if form == nil || len(op.RequestBody.Value.Content) != 1 {
		t.Fatal("orders: POST /oauth/token must take exactly an application/x-www-form-urlencoded body")
	}
	for _, field := range []string{"grant_type", "username", "password", "client_id", "client_secret"} {
		if _, ok := form.Schema.Value.Properties[field]; !ok {
			t.Errorf("orders: the token request's form has no %s field", field)
		}
	}
}

// sourceFiles is every surface's spec as written, by file name.
func sourceFiles() []string {
	var files []string
	for _, name := range api.Names() {
		files = append(files, name+".yaml")
	}
	return files
}
