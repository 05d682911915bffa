package cors

import (
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/deprecation"
)

// Headers are what a policy lets a page on another origin do beyond the CORS-safelisted: the
// methods and request headers a preflight allows, and the response headers the page may read.
type Headers struct {
	Methods, Allow, Expose []string
}

// FromSpecs derives Headers from the OpenAPI documents, so a header a spec declares is usable from
// a browser without a second list to keep in step (a new Idempotency-Key parameter or Retry-After
// answer works cross-origin the day it is specified):
//   - Methods: every method of an operation;
//   - Allow: every header parameter, the header of every apiKey security scheme in a header,
//     Authorization when a scheme is http (bearer, basic) or OAuth 2.0, and Content-Type when an
//     operation takes a body (a JSON body is not a "simple" request);
//   - Expose: every response header, except those a page reads anyway (safelisted) or never
//     (Set-Cookie, which browsers keep from scripts), and the Deprecation, Sunset and Link headers
//     package deprecation adds to whatever a spec marks deprecated.
//
// everyRoute are headers the server reads and sends on every route outside the specs (the request
// id), added to both lists. Each list is sorted, each name once (header names are
// case-insensitive), spelled as first declared.
func FromSpecs(docs []*openapi3.T, everyRoute ...string) Headers {
	methods, allow, expose := map[string]bool{}, names{}, names{}
	for _, h := range everyRoute {
		allow.add(h)
		expose.add(h)
	}
	for _, h := range deprecation.ResponseHeaders() {
		expose.add(h)
	}
	param := func(p *openapi3.ParameterRef) {
		if p != nil && p.Value != nil && p.Value.In == openapi3.ParameterInHeader {
			allow.add(p.Value.Name)
		}
	}
	for _, doc := range docs {
		if doc.Components != nil {
			for _, s := range doc.Components.SecuritySchemes {
				if s == nil || s.Value == nil {
					continue
				}
				switch s.Value.Type {
				case "apiKey":
					if s.Value.In == "header" {
						allow.add(s.Value.Name)
					}
				case "http", "oauth2", "openIdConnect":
					allow.add("Authorization")
				}
			}
		}
		if doc.Paths == nil {
			continue
		}
		for _, item := range doc.Paths.Map() {
			for _, p := range item.Parameters {
				param(p)
			}
			for method, op := range item.Operations() {
				methods[method] = true
				for _, p := range op.Parameters {
					param(p)
				}
				if op.RequestBody != nil {
					allow.add("Content-Type")
				}
				if op.Responses == nil {
					continue
				}
				for _, r := range op.Responses.Map() {
					if r == nil || r.Value == nil {
						continue
					}
					for name := range r.Value.Headers {
						if !readAnyway[http.CanonicalHeaderKey(name)] {
							expose.add(name)
						}
					}
				}
			}
		}
	}
	// OPTIONS is the preflight itself; a spec declares no such operation here.
	delete(methods, http.MethodOptions)
	return Headers{Methods: sortedMethods(methods), Allow: allow.list(), Expose: expose.list()}
}

// readAnyway are response headers a page reads without being exposed (the CORS-safelisted ones)
// or can never read (Set-Cookie).
var readAnyway = map[string]bool{
	"Cache-Control": true, "Content-Language": true, "Content-Length": true, "Content-Type": true,
	"Expires": true, "Last-Modified": true, "Pragma": true, "Set-Cookie": true, "Set-Cookie2": true,
}

// names is a set of header names, case-insensitive, keeping the first spelling.
type names map[string]string

func (n names) add(name string) {
	if _, ok := n[strings.ToLower(name)]; !ok {
		n[strings.ToLower(name)] = name
	}
}

func (n names) list() []string {
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = n[k]
	}
	return out
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sortedMethods lists methods in RFC 9110's order, then any other alphabetically.
func sortedMethods(set map[string]bool) []string {
	order := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	var out []string
	for _, m := range order {
		if set[m] {
			out = append(out, m)
		}
	}
	for _, m := range sorted(set) {
		if !slices.Contains(order, m) {
			out = append(out, strings.ToUpper(m))
		}
	}
	return out
}
