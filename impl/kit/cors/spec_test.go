package cors

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// TestFromSpecs_TheSpecsHeaders: the lists come from what the three specs declare: the retry and
// cache headers a page needs (Idempotency-Key, If-None-Match; Idempotent-Replayed, ETag,
// Retry-After) included, Set-Cookie and the safelisted ones left out.
func TestFromSpecs_TheSpecsHeaders(t *testing.T) {
	t.Parallel()
	var docs []*openapi3.T
	for _, name := range api.Names() {
		doc, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	h := FromSpecs(docs, "X-Request-Id")
	t.Logf("allow %v; expose %v", h.Allow, h.Expose)
	for _, want := range []string{"Authorization", "Content-Type", "Idempotency-Key", "If-None-Match", "X-JWT", "X-Request-Id", "X-XSRF-TOKEN"} {
		if !slices.Contains(h.Allow, want) {
			t.Errorf("a preflight does not allow %s: %v", want, h.Allow)
		}
	}
	// Deprecation, Sunset and Link: what package deprecation adds to anything a spec deprecates.
	for _, want := range []string{"Deprecation", "ETag", "Idempotent-Replayed", "Link", "Location", "Retry-After", "Sunset", "WWW-Authenticate", "X-Request-Id"} {
		if !slices.Contains(h.Expose, want) {
			t.Errorf("a page cannot read %s: %v", want, h.Expose)
		}
	}
	for _, never := range []string{"Set-Cookie", "Cache-Control", "Content-Type"} {
		if slices.Contains(h.Expose, never) {
			t.Errorf("%s is exposed: %v", never, h.Expose)
		}
	}
	if !slices.Equal(h.Methods, []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}) {
		t.Errorf("methods %v", h.Methods)
	}
}

// TestFromSpecs_ANewHeaderIsAllowed: a header parameter or response header added to a spec is in
// the lists with no other change.
func TestFromSpecs_ANewHeaderIsAllowed(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /things:
    parameters:
      - {name: X-Path-Level, in: header, schema: {type: string}}
    put:
      parameters:
        - {name: X-Tenant, in: header, schema: {type: string}}
      responses:
        "200":
          description: ok
          headers:
            X-Rate-Remaining: {schema: {type: integer}}
            Set-Cookie: {schema: {type: string}}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := FromSpecs([]*openapi3.T{doc})
	if !slices.Equal(h.Allow, []string{"X-Path-Level", "X-Tenant"}) || !slices.Equal(h.Expose, []string{"Deprecation", "Link", "Sunset", "X-Rate-Remaining"}) || !slices.Equal(h.Methods, []string{"PUT"}) {
		t.Errorf("got %+v", h)
	}
}
