package api

import "github.com/getkin/kin-openapi/openapi3"

// Extensible is the extension that lists the values of an open enum: the error codes (each
// surface's ErrorCode, ErrorDetail.code, orders' OAuthError.error). A value added to such a list
// is not a breaking change (make breaking, oasdiff), and generators type it as a plain string, so
// a client generated today keeps a code it does not know yet; with `enum` both would break.
const Extensible = "x-extensible-enum"

// Known returns the values schema s lists: its enum, or for an open enum its Extensible list.
func Known(s *openapi3.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		if str, ok := v.(string); ok {
			out = append(out, str)
		}
	}
	if list, ok := s.Extensions[Extensible].([]any); ok {
		for _, v := range list {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}

// CloseEnums turns every open enum of doc's component schemas (and the schemas inside them) into
// a closed one, in place, so a validator refuses a value the list does not name. The tests
// validate the server's responses against the closed lists (impl/testkit/apitest): clients must
// accept an unknown code, but the server must send only listed ones.
func CloseEnums(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if _, open := s.Extensions[Extensible]; open && len(s.Enum) == 0 {
			for _, v := range Known(s) {
				s.Enum = append(s.Enum, v)
			}
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		if s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema)
		}
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
			for _, r := range list {
				walk(r)
			}
		}
		walk(s.Not)
	}
	if doc.Components == nil {
		return
	}
	for _, r := range doc.Components.Schemas {
		walk(r)
	}
}
