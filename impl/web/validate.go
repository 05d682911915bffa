package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	middleware "github.com/oapi-codegen/nethttp-middleware"
)

// Validator returns middleware that checks every request against spec before a handler sees it.
// The spec's servers are cleared so paths match wherever the server is mounted. Authentication is
// left to the surface's own middleware (security requirements are not checked here). A refusal is
// a 400 carrying the shared error body with one detail per invalid field.
func Validator(spec *openapi3.T) func(http.Handler) http.Handler {
	spec.Servers = nil
	return middleware.OapiRequestValidatorWithOptions(spec, &middleware.Options{
		SilenceServersWarning: true,
		Options: openapi3filter.Options{
			MultiError:         true,
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		},
		ErrorHandlerWithOpts: func(_ context.Context, err error, w http.ResponseWriter, r *http.Request, opts middleware.ErrorHandlerOpts) {
			switch opts.StatusCode {
			case http.StatusNotFound:
				NotFound(w, r)
			case http.StatusMethodNotAllowed:
				MethodNotAllowed(w, r)
			default:
				if IsTooLarge(err) {
					WriteError(w, r, http.StatusRequestEntityTooLarge, Error{Code: CodeTooLarge, Message: "request body is too large"})
					return
				}
				WriteError(w, r, http.StatusBadRequest, Error{Code: CodeValidation, Message: "request does not match the API specification", Details: FieldErrors(err)})
			}
		},
	})
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
		return FieldError{Field: field, Message: se.Reason}
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return FieldError{Field: field, Message: msg}
}

// BadParam is the chi-server ErrorHandlerFunc: parameter binding failures become a 400.
func BadParam(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(w, r, http.StatusBadRequest, Error{Code: CodeValidation, Message: "invalid request parameter", Details: []FieldError{{Field: "parameter", Message: firstLine(err.Error())}}})
}

// StrictRequestError is the strict handler's RequestErrorHandlerFunc: a body that cannot be decoded.
func StrictRequestError(w http.ResponseWriter, r *http.Request, err error) {
	if IsTooLarge(err) {
		WriteError(w, r, http.StatusRequestEntityTooLarge, Error{Code: CodeTooLarge, Message: "request body is too large"})
		return
	}
	WriteError(w, r, http.StatusBadRequest, Error{Code: CodeValidation, Message: "request body could not be decoded"})
}

// StrictResponseError returns the strict handler's ResponseErrorHandlerFunc: an error a handler
// returned instead of a typed response is logged and answered with an opaque 500.
func StrictResponseError(log *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		Internal(w, r, log, err)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
