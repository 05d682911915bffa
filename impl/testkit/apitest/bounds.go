package apitest

import (
	"fmt"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// Spec loads one of the OpenAPI documents the server embeds (package api), by file name.
func Spec(t testing.TB, name string) *openapi3.T {
	t.Helper()
	data, err := api.FS.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return spec
}

// Bound is one bound of a spec that Go code states again (a constant, a pattern): where it is in
// the spec and the Go value.
type Bound struct {
	// Schema names a component schema; Property one of its properties, or "" for the schema itself.
	Schema, Property string
	// Keyword is minLength, maxLength, minimum, maximum or pattern.
	Keyword string
	// Go is the Go value: a number for the counts and limits, a string for a pattern.
	Go any
}

// CheckBounds fails t for every bound the spec does not state or states otherwise than Go, so a
// bound changed on one side only fails the surface's test.
func CheckBounds(t *testing.T, spec *openapi3.T, bounds []Bound) {
	t.Helper()
	for _, b := range bounds {
		where := b.Schema
		if b.Property != "" {
			where += "." + b.Property
		}
		where += " " + b.Keyword
		got, err := specBound(spec, b)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if want := normal(b.Go); got != want {
			t.Errorf("%s: the spec says %s, Go says %s", where, got, want)
		}
	}
}

func specBound(spec *openapi3.T, b Bound) (string, error) {
	ref := spec.Components.Schemas[b.Schema]
	if ref == nil || ref.Value == nil {
		return "", fmt.Errorf("no schema %s in the spec", b.Schema)
	}
	s := ref.Value
	if b.Property != "" {
		p := s.Properties[b.Property]
		if p == nil || p.Value == nil {
			return "", fmt.Errorf("schema %s has no property %s", b.Schema, b.Property)
		}
		s = p.Value
	}
	missing := fmt.Errorf("the spec states no %s", b.Keyword)
	switch b.Keyword {
	case "minLength":
		return normal(s.MinLength), nil
	case "maxLength":
		if s.MaxLength == nil {
			return "", missing
		}
		return normal(*s.MaxLength), nil
	case "minimum":
		if s.Min == nil {
			return "", missing
		}
		return normal(*s.Min), nil
	case "maximum":
		if s.Max == nil {
			return "", missing
		}
		return normal(*s.Max), nil
	case "pattern":
		if s.Pattern == "" {
			return "", missing
		}
		return s.Pattern, nil
	}
	return "", fmt.Errorf("unknown keyword %q", b.Keyword)
}

// normal writes numbers of any type alike (100, 100.0 and uint64(100) are all "100").
func normal(v any) string {
	switch n := v.(type) {
	case string:
		return n
	case int:
		return fmt.Sprint(float64(n))
	case int64:
		return fmt.Sprint(float64(n))
	case uint64:
		return fmt.Sprint(float64(n))
	case float64:
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%T %v", v, v)
}
