package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// eachError walks kin-openapi's validation error: fn sees each RequestError, other each error
// that is neither a RequestError nor a MultiError holding them. A type switch, not errors.As:
// MultiError.As would stop at its first match, and a RequestError unwraps to the MultiError of its
// own schema errors.
func eachError(err error, fn func(*openapi3filter.RequestError), other func(error)) {
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, inner := range e {
			eachError(inner, fn, other)
		}
	case *openapi3filter.RequestError:
		fn(e)
	default:
		other(err)
	}
}

// FieldErrors flattens kin-openapi validation errors into per-field details, each placed (in),
// coded and worded by package invalid.
func FieldErrors(err error) []FieldError {
	var out []FieldError
	eachError(err, func(e *openapi3filter.RequestError) {
		in, field := invalid.Body, ""
		var param *openapi3.Schema
		if e.Parameter != nil {
			in, field = invalid.In(e.Parameter.In), e.Parameter.Name
			if e.Parameter.Schema != nil {
				param = e.Parameter.Schema.Value
			}
		}
		switch inner := e.Err.(type) {
		case openapi3.MultiError:
			for _, ie := range inner {
				out = append(out, schemaField(in, field, param, ie))
			}
		case nil:
			out = append(out, reasonField(in, field, e.Reason))
		default:
			out = append(out, schemaField(in, field, param, inner))
		}
	}, func(err error) {
		out = append(out, schemaField(invalid.Body, "", nil, err))
	})
	return out
}

// reasonField is a RequestError without an inner error: a missing parameter or body.
func reasonField(in invalid.In, field, reason string) FieldError {
	if field == "" {
		field = "body"
	}
	if strings.Contains(reason, "required") || strings.Contains(reason, "missing") {
		return invalid.New(in, field, invalid.Required)
	}
	return invalid.New(in, field, invalid.Invalid)
}

// schemaField is the detail of one kin-openapi error about the value at field (a parameter's
// name, or "" for the body's root).
func schemaField(in invalid.In, field string, param *openapi3.Schema, err error) FieldError {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return schemaDetail(in, joinPath(field, se.JSONPointer()), se)
	}
	if field == "" {
		field = "body"
	}
	if errors.Is(err, openapi3filter.ErrInvalidRequired) {
		// A required body (or parameter) that is absent or empty.
		return invalid.New(in, field, invalid.Required)
	}
	var pe *openapi3filter.ParseError
	if errors.As(err, &pe) {
		// A value kin-openapi could not read: its text (value abc: an invalid integer: invalid
		// syntax) is for programmers; say it as the generated binders' path does.
		if in == invalid.Body {
			return invalid.New(in, field, invalid.Malformed)
		}
		return paramDetail(in, field, param, pe)
	}
	return invalid.New(in, field, invalid.Invalid)
}

// joinPath is the dotted path of a value inside field (products.0.price).
func joinPath(field string, pointer []string) string {
	parts := pointer
	if field != "" {
		parts = append([]string{field}, pointer...)
	}
	if len(parts) == 0 {
		return "body"
	}
	return strings.Join(parts, ".")
}

// schemaDetail says in the package invalid's terms what a schema refused.
func schemaDetail(in invalid.In, field string, se *openapi3.SchemaError) FieldError {
	s := se.Schema
	if s == nil {
		s = &openapi3.Schema{}
	}
	if neg, ok := overflows(se.Value); ok && (se.SchemaField == "type" || se.SchemaField == "oneOf" || se.SchemaField == "anyOf") {
		return outOfRange(in, field, numberSchema(se), neg)
	}
	switch se.SchemaField {
	case "required":
		return invalid.New(in, field, invalid.Required)
	case "properties", "additionalProperties":
		// kin-openapi names an unknown property only in its reason: property "colour" is
		// unsupported; the detail names the property itself, not the object holding it.
		if name, ok := unsupportedProperty(se.Reason); ok {
			if field == "body" {
				field = name
			} else {
				field += "." + name
			}
			return invalid.New(in, field, invalid.UnknownField)
		}
	case "type", "nullable":
		return invalid.Expect(in, field, invalid.Type, schemaType(s))
	case "minLength":
		return invalid.Bound(in, field, invalid.TooShort, invalid.Int(int64(s.MinLength)))
	case "maxLength":
		if s.MaxLength != nil {
			return invalid.Bound(in, field, invalid.TooLong, invalid.Int(int64(*s.MaxLength)))
		}
	case "minimum", "exclusiveMinimum":
		if s.Min != nil {
			return invalid.Bound(in, field, invalid.TooSmall, number(*s.Min))
		}
	case "maximum", "exclusiveMaximum":
		if s.Max != nil {
			return invalid.Bound(in, field, invalid.TooLarge, number(*s.Max))
		}
	case "minItems":
		return invalid.Bound(in, field, invalid.TooFew, invalid.Int(int64(s.MinItems)))
	case "maxItems":
		if s.MaxItems != nil {
			return invalid.Bound(in, field, invalid.TooMany, invalid.Int(int64(*s.MaxItems)))
		}
	case "minProperties":
		return invalid.Bound(in, field, invalid.TooFew, invalid.Int(int64(s.MinProps)))
	case "maxProperties":
		if s.MaxProps != nil {
			return invalid.Bound(in, field, invalid.TooMany, invalid.Int(int64(*s.MaxProps)))
		}
	case "pattern", "format":
		// A format the reader knows (email, decimal) says more than its machine-readable pattern.
		if s.Format != "" && s.Format != "password" {
			return invalid.Expect(in, field, invalid.Format, s.Format)
		}
		if se.SchemaField == "pattern" {
			return invalid.Expect(in, field, invalid.Pattern, s.Pattern)
		}
	case "enum":
		allowed := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			allowed[i] = fmt.Sprint(v)
		}
		return invalid.OneOf(in, field, allowed)
	case "oneOf", "anyOf":
		// kin-openapi only says that no variant matched. The variant of the value's type (a price
		// sent as a string) says what is wrong with it; when no variant has that type, the
		// reader learns which types the field takes.
		var branches openapi3.MultiError
		if errors.As(se.Origin, &branches) {
			var types []string
			for _, b := range branches {
				var bse *openapi3.SchemaError
				if !errors.As(b, &bse) {
					continue
				}
				if bse.SchemaField != "type" {
					return schemaDetail(in, field, bse)
				}
				types = append(types, schemaType(bse.Schema))
			}
			if len(types) > 0 {
				return invalid.Expect(in, field, invalid.Type, strings.Join(types, "|"))
			}
		}
	}
	return invalid.New(in, field, invalid.Invalid)
}

// overflows reports whether v is a JSON number beyond float64 (1e309), and whether it is negative.
// kin-openapi cannot read such a literal as a number and calls it the wrong type; it is a number,
// out of range (docs/orders.md), so the detail says too_large or too_small.
func overflows(v any) (negative, ok bool) {
	var lit string
	switch n := v.(type) {
	case json.Number:
		lit = string(n)
	case float64:
		if !math.IsInf(n, 0) {
			return false, false
		}
		return n < 0, true
	default:
		return false, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if !errors.Is(err, strconv.ErrRange) || !math.IsInf(f, 0) {
		return false, false
	}
	return f < 0, true
}

// numberSchema is the schema that takes numbers where se refused one: se's own, or the number
// variant of a oneOf/anyOf (a price is a number or a decimal string).
func numberSchema(se *openapi3.SchemaError) *openapi3.Schema {
	s := se.Schema
	if s == nil {
		return nil
	}
	for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf} {
		for _, r := range list {
			if r != nil && r.Value != nil && r.Value.Type != nil && (r.Value.Type.Is(openapi3.TypeNumber) || r.Value.Type.Is(openapi3.TypeInteger)) {
				return r.Value
			}
		}
	}
	return s
}

// outOfRange is too_large (too_small for a negative number) with the schema's bound as the limit,
// or without a limit when the schema has none.
func outOfRange(in invalid.In, field string, s *openapi3.Schema, negative bool) FieldError {
	if negative {
		if s != nil && s.Min != nil {
			return invalid.Bound(in, field, invalid.TooSmall, number(*s.Min))
		}
		return invalid.New(in, field, invalid.TooSmall)
	}
	if s != nil && s.Max != nil {
		return invalid.Bound(in, field, invalid.TooLarge, number(*s.Max))
	}
	return invalid.New(in, field, invalid.TooLarge)
}

// unsupportedProperty reads the name out of kin-openapi's `property "colour" is unsupported`.
func unsupportedProperty(reason string) (string, bool) {
	rest, ok := strings.CutPrefix(reason, "property ")
	if !ok {
		return "", false
	}
	quoted, ok := strings.CutSuffix(rest, " is unsupported")
	if !ok {
		return "", false
	}
	name, err := strconv.Unquote(quoted)
	return name, err == nil
}

// schemaType is the JSON type a schema takes, as Detail.Expected names it.
func schemaType(s *openapi3.Schema) string {
	if s == nil || s.Type == nil {
		return ""
	}
	for _, t := range []string{openapi3.TypeString, openapi3.TypeInteger, openapi3.TypeNumber,
		openapi3.TypeBoolean, openapi3.TypeArray, openapi3.TypeObject} {
		if s.Type.Is(t) {
			return t
		}
	}
	return ""
}

// number writes a schema bound as the decimal it is in the spec (0.01, 1000000), never in
// exponent form.
func number(f float64) json.Number {
	return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
}
