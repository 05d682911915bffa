package apitest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
)

// Spec is one of the OpenAPI documents the server embeds (package api), by file name: parsed and
// checked (openapi3's Validate) once per test process and shared by every caller, which only reads
// it. NewValidator (and Client) given it validate against a second copy, parsed once too and
// prepared (servers cleared, open enums closed), so Spec stays as published. Under -race one parse
// costs a third of a second, and a test package builds dozens of clients.
func Spec(t testing.TB, name string) *openapi3.T {
	t.Helper()
	spec, err := loaded(name, false)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// specs holds the loader of each file name's document as published (false) and prepared for a
// Validator (true); shared names each document Spec returned, with the loader of its prepared copy.
var specs, shared sync.Map

type specKey struct {
	name     string
	prepared bool
}

// loaded is the document of file name, loaded once per process (Spec's), or its prepared copy.
func loaded(name string, prepared bool) (*openapi3.T, error) {
	load, _ := specs.LoadOrStore(specKey{name, prepared}, sync.OnceValues(func() (*openapi3.T, error) {
		spec, err := loadSpec(name)
		switch {
		case err != nil:
		case prepared:
			prepare(spec)
		default:
			shared.Store(spec, name)
		}
		return spec, err
	}))
	return load.(func() (*openapi3.T, error))()
}

// validated is the document a Validator of spec validates against: Spec's prepared copy when
// spec is Spec's, else spec itself, prepared in place.
func validated(spec *openapi3.T) (*openapi3.T, error) {
	if name, ok := shared.Load(spec); ok {
		return loaded(name.(string), true)
	}
	prepare(spec)
	return spec, nil
}

// loadSpec parses and checks one embedded document.
func loadSpec(name string) (*openapi3.T, error) {
	data, err := api.FS.ReadFile(name)
	if err != nil {
		return nil, err
	}
	spec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", name, err)
	}
	return spec, nil
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
