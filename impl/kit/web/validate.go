package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	middleware "github.com/oapi-codegen/nethttp-middleware"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// Validator returns middleware that checks every request against spec before a handler sees it.
// It leaves spec as it is, so one parsed document serves every consumer of a process (a surface's
// spec is parsed once, not once per mount): it validates against a copy whose servers are cleared,
// so paths match wherever the server is mounted, and whose security requirements are too, since
// authentication is the surface's own middleware's. Every
// violation of the request is reported at once: a body whose Content-Type the operation does not
// take is a 415 unsupported_media_type, anything else a 400 validation_failed with one detail per
// invalid field. also adds the surface's own checks of an operation's fields to its 400, so that
// a client learns every problem from one answer; a key of also that names no operation of spec is
// an error, so a misspelt id stops the start instead of silently checking nothing.
func Validator(spec *openapi3.T, also FieldChecks) (func(http.Handler) http.Handler, error) {
	if err := KnownOperations(spec, slices.Collect(maps.Keys(also))...); err != nil {
		return nil, err
	}
	spec = forValidation(spec)
	// The operation of a refused request, for its own field checks (servers cleared above: any
	// host matches).
	var find routers.Router
	if len(also) > 0 {
		var err error
		if find, err = gorillamux.NewRouter(spec); err != nil {
			return nil, err
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
				WriteError(w, r, http.StatusBadRequest, Invalid(withChecks(r, FieldErrors(err), also[operationOf(find, r)])...))
			}
		},
	}), nil
}

// forValidation is a copy of spec for the request validator: no servers, and no security
// requirements, since kin-openapi walks an operation's requirements on every request even when the
// authentication function accepts anything, and the surfaces authenticate before the validator runs,
// so the walk ends at once. Only what changes is copied (the document, its paths, their items and
// operations); schemas, parameters and bodies are shared with spec, read-only.
func forValidation(spec *openapi3.T) *openapi3.T {
	c := *spec
	c.Servers, c.Security = nil, nil
	none := openapi3.SecurityRequirements{}
	c.Paths = openapi3.NewPathsWithCapacity(spec.Paths.Len())
	c.Paths.Extensions = spec.Paths.Extensions
	for _, path := range spec.Paths.InMatchingOrder() {
		item := *spec.Paths.Value(path)
		item.AdditionalOperations = nil // the copy's own map, if SetOperation needs one
		for method, op := range spec.Paths.Value(path).Operations() {
			o := *op
			o.Security = &none
			item.SetOperation(method, &o)
		}
		c.Paths.Set(path, &item)
	}
	return &c
}

// FieldCheck is a surface's own checks of a request's fields beyond its spec (a price's two
// fractional digits), given the request and its body: the details of the fields it refuses.
type FieldCheck func(r *http.Request, body []byte) []FieldError

// FieldChecks are a surface's FieldCheck of each operation that has one, keyed by the operation's
// id as the generated code spells it (RegisterOrdersUser: the spec's operationId, first letter
// upper case), the name the generated strict middleware is given too.
type FieldChecks map[string]FieldCheck

// KnownOperations says which of ids (as the generated code spells them) names no operation of
// spec, or nil: wiring keyed by operation id checks its keys at start with it.
func KnownOperations(spec *openapi3.T, ids ...string) error {
	known := map[string]bool{}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			known[GeneratedOperationID(op.OperationID)] = true
		}
	}
	var unknown []string
	for _, id := range ids {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("no operation %s in the %s spec", strings.Join(unknown, ", "), spec.Info.Title)
	}
	return nil
}

// GeneratedOperationID is an operationId as oapi-codegen names its handler and hands it to the
// strict middleware: the first letter upper case.
func GeneratedOperationID(id string) string {
	if id == "" {
		return ""
	}
	return strings.ToUpper(id[:1]) + id[1:]
}

// operationOf is the generated id of the operation r asks for, or "" (only on the refusal path:
// a request the validator refused).
func operationOf(find routers.Router, r *http.Request) string {
	if find == nil {
		return ""
	}
	route, _, err := find.FindRoute(r)
	if err != nil {
		return ""
	}
	return GeneratedOperationID(route.Operation.OperationID)
}

// withChecks adds to the spec validator's details those of also about fields the validator did
// not name (a field the spec refused, or one inside it, is not refused twice).
func withChecks(r *http.Request, details []FieldError, also FieldCheck) []FieldError {
	if also == nil {
		return details
	}
	var body []byte
	if r.GetBody != nil {
		// kin-openapi read the body and left a way to read it again.
		if rc, err := r.GetBody(); err == nil {
			body, _ = io.ReadAll(rc)
			_ = rc.Close()
		}
	}
	for _, d := range also(r, body) {
		named := false
		for _, have := range details {
			if have.In == d.In && (have.Field == d.Field || strings.HasPrefix(d.Field, have.Field+".") || have.Field == "body") {
				named = true
				break
			}
		}
		if !named {
			details = append(details, d)
		}
	}
	return details
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
	case CodeServerBusy:
		return MessageServerBusy, true
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
	eachError(err, func(e *openapi3filter.RequestError) {
		if e.RequestBody != nil && (strings.HasPrefix(e.Reason, "header Content-Type has unexpected value") ||
			strings.HasPrefix(e.Reason, "unsupported content type")) {
			found = true
		}
		var pe *openapi3filter.ParseError
		if errors.As(e.Err, &pe) && pe.Kind == openapi3filter.KindUnsupportedFormat {
			found = true
		}
	}, func(error) {})
	return found
}

// StrictRequestError is the strict handler's RequestErrorHandlerFunc: a body that cannot be decoded
// (a number beyond float64 where the spec takes any value: the place WithOverflow noted).
func StrictRequestError(w http.ResponseWriter, r *http.Request, err error) {
	if IsTooLarge(err) {
		WriteError(w, r, http.StatusRequestEntityTooLarge, TooLarge())
		return
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		if d, ok := overflowIn(r.Context()); ok {
			WriteError(w, r, http.StatusBadRequest, Invalid(d))
			return
		}
	}
	WriteError(w, r, http.StatusBadRequest, Invalid(invalid.New(invalid.Body, "body", invalid.Malformed)))
}

// StrictResponseError is the strict handler's ResponseErrorHandlerFunc: an error a handler returned
// instead of a typed response is logged (on the request's logger) and answered with an opaque 500.
func StrictResponseError(w http.ResponseWriter, r *http.Request, err error) {
	Internal(w, r, err)
}
