package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	middleware "github.com/oapi-codegen/nethttp-middleware"
)

// Validator returns middleware that checks every request against spec before a handler sees it.
// The validator owns spec: its servers are cleared so paths match wherever the server is mounted,
// and its security requirements too, since authentication is the surface's own middleware's. Every
// violation of the request is reported at once: a body whose Content-Type the operation does not
// take is a 415 unsupported_media_type, anything else a 400 validation_failed with one detail per
// invalid field.
func Validator(spec *openapi3.T) func(http.Handler) http.Handler {
	spec.Servers = nil
	// kin-openapi walks an operation's security requirements on every request even when the
	// authentication function accepts anything; the surfaces authenticate before the validator
	// runs, so this copy of the spec states none and the walk ends at once.
	none := openapi3.SecurityRequirements{}
	spec.Security = nil
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			op.Security = &none
		}
	}
	return middleware.OapiRequestValidatorWithOptions(spec, &middleware.Options{
		SilenceServersWarning: true,
		Options: openapi3filter.Options{
			MultiError:         true,
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
		ErrorHandlerWithOpts: func(_ context.Context, err error, w http.ResponseWriter, r *http.Request, opts middleware.ErrorHandlerOpts) {
			switch {
			case opts.StatusCode == http.StatusNotFound:
				NotFound(w, r)
			case opts.StatusCode == http.StatusMethodNotAllowed:
				MethodNotAllowed(w, r)
			case IsTooLarge(err):
				WriteError(w, r, http.StatusRequestEntityTooLarge, TooLarge())
			case unsupportedMediaType(err):
				WriteError(w, r, http.StatusUnsupportedMediaType, UnsupportedMediaType())
			default:
				WriteError(w, r, http.StatusBadRequest, Invalid(FieldErrors(err)...))
			}
		},
	})
}

// The one message of each shared code, whichever layer and surface refuses: the details (or the
// status, or the WWW-Authenticate challenge) say what differs, the message stays the same so
// clients and logs can match on it. OneMessage lists them for the tests that hold every layer to
// them.
const (
	MessageValidation       = "request does not match the API specification"
	MessageTooLarge         = "request body is too large"
	MessageUnsupportedMedia = "the request body's Content-Type is not one this operation accepts"
	MessageUnauthorized     = "authentication required"
	MessageInternal         = "internal server error"
	MessageDatabaseDown     = "the database is unavailable; retry in a few seconds"
)

// OneMessage returns the one message of a code every surface shares, and false for a code whose
// message names the thing refused ("order 17 not found") or that one surface alone answers.
func OneMessage(code string) (string, bool) {
	switch code {
	case CodeValidation:
		return MessageValidation, true
	case CodeTooLarge:
		return MessageTooLarge, true
	case CodeUnsupportedMediaType:
		return MessageUnsupportedMedia, true
	case CodeUnauthorized:
		return MessageUnauthorized, true
	case CodeInternal:
		return MessageInternal, true
	case CodeDatabaseUnavailable:
		return MessageDatabaseDown, true
	}
	return "", false
}

// Invalid is the validation_failed body with the given per-field details.
func Invalid(details ...FieldError) Error {
	return Error{Code: CodeValidation, Message: MessageValidation, Details: details}
}

// TooLarge is the request_too_large body.
func TooLarge() Error { return Error{Code: CodeTooLarge, Message: MessageTooLarge} }

// Unauthorized is the unauthorized body (status 401); the WWW-Authenticate challenge beside it
// says whether credentials were missing or refused.
func Unauthorized() Error { return Error{Code: CodeUnauthorized, Message: MessageUnauthorized} }

// UnsupportedMediaType is the unsupported_media_type body (status 415).
func UnsupportedMediaType() Error {
	return Error{Code: CodeUnsupportedMediaType, Message: MessageUnsupportedMedia}
}

// unsupportedMediaType reports whether kin-openapi refused the request's Content-Type (a body of a
// type the operation does not list, or no type at all). Checked before the field errors, since
// the fields of a body that could not be read say nothing useful.
func unsupportedMediaType(err error) bool {
	found := false
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner)
			}
		case *openapi3filter.RequestError:
			if e.RequestBody != nil && (strings.HasPrefix(e.Reason, "header Content-Type has unexpected value") ||
				strings.HasPrefix(e.Reason, "unsupported content type")) {
				found = true
			}
			var pe *openapi3filter.ParseError
			if errors.As(e.Err, &pe) && pe.Kind == openapi3filter.KindUnsupportedFormat {
				found = true
			}
		}
	}
	walk(err)
	return found
}

// FieldErrors flattens kin-openapi validation errors into per-field details.
func FieldErrors(err error) []FieldError {
	var out []FieldError
	var walk func(error)
	walk = func(err error) {
		// A type switch, not errors.As: MultiError.As would stop at its first match, and a
		// RequestError unwraps to the MultiError of its own schema errors.
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner)
			}
		case *openapi3filter.RequestError:
			field := "body"
			if e.Parameter != nil {
				field = e.Parameter.Name
			}
			switch inner := e.Err.(type) {
			case openapi3.MultiError:
				for _, ie := range inner {
					out = append(out, schemaField(field, ie))
				}
			case nil:
				out = append(out, FieldError{Field: field, Message: e.Reason})
			default:
				out = append(out, schemaField(field, inner))
			}
		default:
			out = append(out, schemaField("request", err))
		}
	}
	walk(err)
	return out
}

func schemaField(field string, err error) FieldError {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		if p := se.JSONPointer(); len(p) > 0 {
			if field == "body" {
				field = strings.Join(p, ".")
			} else {
				field = field + "." + strings.Join(p, ".")
			}
		}
		return FieldError{Field: field, Message: schemaMessage(se)}
	}
	var pe *openapi3filter.ParseError
	if errors.As(err, &pe) {
		// A value kin-openapi could not read: its text (value abc: an invalid integer: invalid
		// syntax) is for programmers; say it as the generated binders' path does.
		if field == "body" {
			return FieldError{Field: field, Message: MessageUndecodable}
		}
		return FieldError{Field: field, Message: ParamProblem(pe)}
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return FieldError{Field: field, Message: msg}
}

// schemaMessage says in plain words what a schema refused.
func schemaMessage(se *openapi3.SchemaError) string {
	if se.SchemaField == "oneOf" {
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
					return schemaMessage(bse)
				}
				types = append(types, typeWords(bse.Schema))
			}
			if len(types) > 0 {
				return "must be " + strings.Join(types, " or ")
			}
		}
	}
	if se.Schema != nil && (se.SchemaField == "pattern" || se.SchemaField == "format") {
		// The pattern is the spec's machine-readable rule; the reader wants the plain words.
		switch se.Schema.Format {
		case "email":
			return "must be an email address"
		case "decimal":
			return "must be a decimal in plain notation, e.g. 120.50"
		}
	}
	return se.Reason
}

// typeWords names the type a schema takes, for "must be a number or a decimal string".
func typeWords(s *openapi3.Schema) string {
	switch {
	case s == nil || s.Type == nil:
		return "a value of another type"
	case s.Type.Is(openapi3.TypeString) && s.Format == "decimal":
		return "a decimal string"
	case s.Type.Is(openapi3.TypeString):
		return "a string"
	case s.Type.Is(openapi3.TypeNumber):
		return "a number"
	case s.Type.Is(openapi3.TypeInteger):
		return "an integer"
	case s.Type.Is(openapi3.TypeBoolean):
		return "true or false"
	case s.Type.Is(openapi3.TypeArray):
		return "an array"
	default:
		return "an object"
	}
}

// BadParam is the chi-server ErrorHandlerFunc: a parameter the generated binder could not read
// (not a number, missing, repeated) becomes a 400 naming the parameter, in the same words the spec
// validator uses.
func BadParam(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, http.StatusBadRequest, Invalid(ParamError(err)))
}

// ParamError is the detail BadParam gives for a generated binder's error: the parameter's name and
// what is wrong with it in plain words. A surface that checks its other parameters too (to report
// them all at once) builds its answer from it.
func ParamError(err error) FieldError {
	return FieldError{Field: paramName(err), Message: ParamProblem(err)}
}

// MessageUndecodable is the detail message of a body that could not be read as its Content-Type
// says (JSON cut short, say).
const MessageUndecodable = "could not be decoded"

// ParamRepeated is the detail message of a parameter given more than once where it takes one value.
const ParamRepeated = "must be given once"

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

// ParamProblem says in plain words what is wrong with a parameter value that could not be read
// (a binder's error, or a strconv error); the binder's own text (strconv.ParseInt: parsing "abc":
// invalid syntax) is for programmers, not API users.
func ParamProblem(err error) string {
	var num *strconv.NumError
	var pe *openapi3filter.ParseError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Cause, strconv.ErrRange):
		return "number is out of range"
	case errors.As(err, &pe) && (pe.Reason == "an invalid integer" || pe.Reason == "an invalid number"):
		return "must be a number"
	case errors.As(err, &pe) && pe.Reason == "an invalid boolean":
		return "must be true or false"
	case errors.As(err, &pe):
		return "value is not valid"
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange),
		strings.Contains(err.Error(), "overflows destination"):
		return "number is out of range"
	case errors.As(err, &num):
		return "must be a number"
	case strings.Contains(err.Error(), "is required"):
		return "value is required"
	case strings.Contains(err.Error(), "Expected one value"),
		strings.Contains(err.Error(), "multiple values for single value parameter"):
		return ParamRepeated
	default:
		return "value is not valid"
	}
}

// StrictRequestError is the strict handler's RequestErrorHandlerFunc: a body that cannot be decoded.
func StrictRequestError(w http.ResponseWriter, r *http.Request, err error) {
	if IsTooLarge(err) {
		WriteError(w, r, http.StatusRequestEntityTooLarge, TooLarge())
		return
	}
	WriteError(w, r, http.StatusBadRequest, Invalid(FieldError{Field: "body", Message: MessageUndecodable}))
}

// StrictResponseError returns the strict handler's ResponseErrorHandlerFunc: an error a handler
// returned instead of a typed response is logged and answered with an opaque 500.
func StrictResponseError(log *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		Internal(w, r, log, err)
	}
}
