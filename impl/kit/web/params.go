package web

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// This file: the details of parameters the generated binders could not read (BadParam), in the
// words the spec validator uses for the same mistakes (details.go).

// BadParam is the chi-server ErrorHandlerFunc: a parameter the generated binder could not read
// (not a number, missing, repeated) becomes a 400 naming the parameter, in the same words the spec
// validator uses.
func BadParam(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, http.StatusBadRequest, Invalid(ParamError(r, err)))
}

// ParamError is the detail BadParam gives for a generated binder's error: where the parameter was,
// its name and what is wrong with it. A surface that checks its other parameters too (to report
// them all at once) builds its answer from it.
func ParamError(r *http.Request, err error) FieldError {
	name := paramName(err)
	return paramDetail(paramIn(r, name, err), name, nil, err)
}

// paramIn places a parameter a generated binder refused. The binders' error types name header and
// cookie parameters; of the rest, a name in the query string is a query parameter and any other
// a path segment's (a missing required query parameter is RequiredParamError's).
func paramIn(r *http.Request, name string, err error) invalid.In {
	t := reflect.TypeOf(err)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typ := ""
	if t != nil {
		typ = t.Name()
	}
	switch {
	case strings.Contains(typ, "Header"):
		return invalid.Header
	case strings.Contains(typ, "Cookie"):
		return invalid.Cookie
	case strings.HasPrefix(typ, "RequiredParam") || strings.HasPrefix(typ, "TooManyValues"):
		return invalid.Query
	case r != nil && r.URL.Query().Has(name):
		return invalid.Query
	}
	return invalid.Path
}

// paramName finds the parameter a generated binder error is about. Each generated package has its
// own error types, all carrying the name in a ParamName field.
func paramName(err error) string {
	v := reflect.ValueOf(err)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "parameter"
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("ParamName"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
			return f.String()
		}
	}
	return "parameter"
}

// ParamDetail says what is wrong with a parameter value that could not be read (a binder's error,
// kin-openapi's, or a strconv error); the binder's own text (strconv.ParseInt: parsing "abc":
// invalid syntax) is for programmers, not API users. expected is the type the parameter takes
// ("integer" when unknown and the error is a number's).
func ParamDetail(in invalid.In, name, expected string, err error) FieldError {
	var num *strconv.NumError
	var pe *openapi3filter.ParseError
	negative := func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "-") }
	outOfRange := func(value string) FieldError {
		if negative(value) {
			return invalid.New(in, name, invalid.TooSmall)
		}
		return invalid.New(in, name, invalid.TooLarge)
	}
	if expected == "" {
		expected = openapi3.TypeInteger
	}
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Cause, strconv.ErrRange):
		return outOfRange(fmt.Sprint(pe.Value))
	case errors.As(err, &pe) && pe.Reason == "an invalid integer":
		return invalid.Expect(in, name, invalid.Type, openapi3.TypeInteger)
	case errors.As(err, &pe) && pe.Reason == "an invalid number":
		return invalid.Expect(in, name, invalid.Type, openapi3.TypeNumber)
	case errors.As(err, &pe) && pe.Reason == "an invalid boolean":
		return invalid.Expect(in, name, invalid.Type, openapi3.TypeBoolean)
	case errors.As(err, &pe):
		return invalid.New(in, name, invalid.Invalid)
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		return outOfRange(num.Num)
	case strings.Contains(err.Error(), "overflows destination"):
		// The runtime's text: value '-99999999999' overflows destination of type: int32.
		_, value, _ := strings.Cut(err.Error(), "value '")
		return outOfRange(value)
	case errors.As(err, &num):
		return invalid.Expect(in, name, invalid.Type, expected)
	case strings.Contains(err.Error(), "is required"):
		return invalid.New(in, name, invalid.Required)
	case strings.Contains(err.Error(), "Expected one value"),
		strings.Contains(err.Error(), "multiple values for single value parameter"):
		return invalid.New(in, name, invalid.Repeated)
	default:
		return invalid.New(in, name, invalid.Invalid)
	}
}

// paramDetail is ParamDetail with the type taken from the parameter's schema, when known; a
// number too large (or small) to read at all breaks the schema's bound, which it then names.
func paramDetail(in invalid.In, name string, schema *openapi3.Schema, err error) FieldError {
	d := ParamDetail(in, name, schemaType(schema), err)
	switch {
	case schema == nil || d.Limit != "":
	case d.Code == invalid.TooLarge && schema.Max != nil:
		return invalid.Bound(in, name, invalid.TooLarge, number(*schema.Max))
	case d.Code == invalid.TooSmall && schema.Min != nil:
		return invalid.Bound(in, name, invalid.TooSmall, number(*schema.Min))
	}
	return d
}
