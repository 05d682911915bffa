package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oapi-codegen/runtime"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// paramErr mirrors the binder errors oapi-codegen generates in each gen/<surface>api package.
type paramErr struct {
	ParamName string
	Err       error
}

func (e *paramErr) Error() string {
	return "Invalid format for parameter " + e.ParamName + ": " + e.Err.Error()
}
func (e *paramErr) Unwrap() error { return e.Err }

// TestBadParam_NamesTheParameterInPlainWords: GET /orders?size=abc says `size: type integer, must
// be an integer`, never the binder's strconv text.
func TestBadParam_NamesTheParameterInPlainWords(t *testing.T) {
	t.Parallel()
	_, syntax := strconv.ParseInt("abc", 10, 32)
	_, rng := strconv.ParseInt("99999999999", 10, 32)
	tests := []struct {
		name, target string
		err          error
		want         FieldError
	}{
		{"not a number", "/orders?size=abc", &paramErr{"size", syntax}, invalid.Expect(invalid.Query, "size", invalid.Type, "integer")},
		{"out of range", "/orders?page=99999999999", &paramErr{"page", rng}, invalid.New(invalid.Query, "page", invalid.TooLarge)},
		{"a path segment", "/orders/abc/take", &paramErr{"id", syntax}, invalid.Expect(invalid.Path, "id", invalid.Type, "integer")},
		{"no name known", "/orders", errors.New("odd"), invalid.New(invalid.Path, "parameter", invalid.Invalid)},
		// What the generated binders' runtime says for a number too big for its type and for a
		// parameter sent twice.
		{"overflows the type", "/orders?size=99999999999", &paramErr{"size", bindInt32(t, "size=99999999999")}, invalid.New(invalid.Query, "size", invalid.TooLarge)},
		{"overflows below", "/orders?size=-99999999999", &paramErr{"size", bindInt32(t, "size=-99999999999")}, invalid.New(invalid.Query, "size", invalid.TooSmall)},
		{"repeated", "/orders?page=1&page=2", &paramErr{"page", bindInt32(t, "page=1&page=2")}, invalid.New(invalid.Query, "page", invalid.Repeated)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			BadParam(rec, httptest.NewRequest(http.MethodGet, tc.target, nil), tc.err)
			e := decodeError(t, rec.Body)
			if rec.Code != http.StatusBadRequest || e.Code != CodeValidation || e.Message != MessageValidation ||
				len(e.Details) != 1 || !sameDetail(e.Details[0], tc.want) {
				t.Fatalf("got %d %+v, want 400 %+v", rec.Code, e, tc.want)
			}
		})
	}
}

// sameDetail compares two details field by field (Allowed is a slice).
func sameDetail(a, b FieldError) bool {
	return a.In == b.In && a.Field == b.Field && a.Code == b.Code && a.Limit == b.Limit &&
		a.Expected == b.Expected && slices.Equal(a.Allowed, b.Allowed) && a.Message == b.Message
}

// bindInt32 is the error of the oapi-codegen runtime binding the first parameter of query into an
// int32, as the generated wrappers call it.
func bindInt32(t *testing.T, query string) error {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	var v *int32
	name, _, _ := strings.Cut(query, "=")
	err = runtime.BindQueryParameterWithOptions("form", true, false, name, q, &v,
		runtime.BindQueryParameterOptions{Type: "integer", Format: "int32"})
	if err == nil {
		t.Fatalf("%s binds", query)
	}
	return err
}

// codesSpecYAML has a rule for each code the spec validator answers.
const codesSpecYAML = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: integer, format: int64, minimum: 1}}
    post:
      operationId: updateThing
      parameters:
        - {name: notify, in: query, schema: {type: boolean}}
        - {name: size, in: query, schema: {type: integer, format: int32, maximum: 100}}
        - {name: sort, in: query, schema: {type: string, enum: [asc, desc]}}
        - {name: X-Tag, in: header, schema: {type: string, maxLength: 4}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [name]
              properties:
                name: {type: string, minLength: 2, maxLength: 4, pattern: '^[a-z]+$'}
                email: {type: string, format: email, pattern: '^[^@]+@[^@]+$'}
                count: {type: integer}
                tags: {type: array, minItems: 1, maxItems: 2, items: {type: string}}
                labels: {type: object, maxProperties: 1, additionalProperties: {type: string}}
                step: {type: number, multipleOf: 5}
                price:
                  oneOf:
                    - {type: number, minimum: 0.01}
                    - {type: string, format: decimal, pattern: '^(0|[1-9][0-9]*)(\.[0-9]+)?$', maxLength: 32}
                shop:
                  type: object
                  additionalProperties: false
                  properties:
                    city: {type: string}
      responses:
        "204": {description: ok}
`

// TestValidator_EveryCode: each rule of a spec is answered with its code, where the value was
// (in), the property's path (never `body` for a property), the limit where the rule has one, and
// the code's one message.
func TestValidator_EveryCode(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(codesSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(t.Context()); err != nil {
		t.Fatalf("the spec does not validate: %v", err)
	}
	validate, err := Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	B, Q, P, H := invalid.Body, invalid.Query, invalid.Path, invalid.Header
	tests := []struct {
		name, target, body string
		header             string // X-Tag
		want               FieldError
	}{
		{"required", "/things/1", `{}`, "", invalid.New(B, "name", invalid.Required)},
		{"required body", "/things/1", ``, "", invalid.New(B, "body", invalid.Required)},
		{"unknown_field", "/things/1", `{"name":"ab","colour":1}`, "", invalid.New(B, "colour", invalid.UnknownField)},
		{"unknown_field nested", "/things/1", `{"name":"ab","shop":{"town":"x"}}`, "", invalid.New(B, "shop.town", invalid.UnknownField)},
		{"type", "/things/1", `{"name":"ab","count":"x"}`, "", invalid.Expect(B, "count", invalid.Type, "integer")},
		{"type of a oneOf", "/things/1", `{"name":"ab","price":true}`, "", invalid.Expect(B, "price", invalid.Type, "number|string")},
		{"type of a path parameter", "/things/abc", `{"name":"ab"}`, "", invalid.Expect(P, "id", invalid.Type, "integer")},
		{"type of a query parameter", "/things/1?notify=maybe", `{"name":"ab"}`, "", invalid.Expect(Q, "notify", invalid.Type, "boolean")},
		{"too_short", "/things/1", `{"name":"a"}`, "", invalid.Bound(B, "name", invalid.TooShort, "2")},
		{"too_long", "/things/1", `{"name":"abcde"}`, "", invalid.Bound(B, "name", invalid.TooLong, "4")},
		{"too_long in a header", "/things/1", `{"name":"ab"}`, "abcde", invalid.Bound(H, "X-Tag", invalid.TooLong, "4")},
		{"too_small", "/things/0", `{"name":"ab"}`, "", invalid.Bound(P, "id", invalid.TooSmall, "1")},
		{"too_small, a decimal bound", "/things/1", `{"name":"ab","price":0}`, "", invalid.Bound(B, "price", invalid.TooSmall, "0.01")},
		{"too_large", "/things/1?size=101", `{"name":"ab"}`, "", invalid.Bound(Q, "size", invalid.TooLarge, "100")},
		{"too_large, past the type: the schema's bound", "/things/1?size=99999999999", `{"name":"ab"}`, "", invalid.Bound(Q, "size", invalid.TooLarge, "100")},
		{"too_few", "/things/1", `{"name":"ab","tags":[]}`, "", invalid.Bound(B, "tags", invalid.TooFew, "1")},
		{"too_many", "/things/1", `{"name":"ab","tags":["a","b","c"]}`, "", invalid.Bound(B, "tags", invalid.TooMany, "2")},
		{"too_many members", "/things/1", `{"name":"ab","labels":{"a":"1","b":"2"}}`, "", invalid.Bound(B, "labels", invalid.TooMany, "1")},
		{"type of an item", "/things/1", `{"name":"ab","tags":[1]}`, "", invalid.Expect(B, "tags.0", invalid.Type, "string")},
		{"pattern", "/things/1", `{"name":"AB"}`, "", invalid.Expect(B, "name", invalid.Pattern, "^[a-z]+$")},
		{"format (its pattern, in the format's words)", "/things/1", `{"name":"ab","email":"nope"}`, "", invalid.Expect(B, "email", invalid.Format, "email")},
		{"format of a oneOf's string", "/things/1", `{"name":"ab","price":"1e2"}`, "", invalid.Expect(B, "price", invalid.Format, "decimal")},
		{"too_long of a oneOf's string", "/things/1", `{"name":"ab","price":"1.` + strings.Repeat("0", 31) + `"}`, "", invalid.Bound(B, "price", invalid.TooLong, "32")},
		{"enum", "/things/1?sort=up", `{"name":"ab"}`, "", invalid.OneOf(Q, "sort", []string{"asc", "desc"})},
		{"malformed", "/things/1", `{"name":`, "", invalid.New(B, "body", invalid.Malformed)},
		{"invalid (a rule without a code of its own)", "/things/1", `{"name":"ab","step":7}`, "", invalid.New(B, "step", invalid.Invalid)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tc.target, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.header != "" {
				req.Header.Set("X-Tag", tc.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			e := decodeError(t, rec.Body)
			if rec.Code != http.StatusBadRequest || e.Code != CodeValidation || e.Message != MessageValidation {
				t.Fatalf("got %d %+v, want 400 validation_failed", rec.Code, e)
			}
			if len(e.Details) != 1 || !sameDetail(e.Details[0], tc.want) {
				t.Fatalf("details %+v, want [%+v]", e.Details, tc.want)
			}
		})
	}
}

// TestValidator_MergesTheSurfacesChecks: one answer lists the spec's problems and those of the
// surface's own checks (given the body), without naming a field twice.
func TestValidator_MergesTheSurfacesChecks(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(codesSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	var sawBody string
	also := func(_ *http.Request, body []byte) []FieldError {
		sawBody = string(body)
		return []FieldError{
			invalid.Bound(invalid.Body, "price", invalid.Precision, "2"), // a rule the spec lacks
			invalid.New(invalid.Body, "name", invalid.Blank),             // the spec named name already
		}
	}
	validate, err := Validator(spec, FieldChecks{"UpdateThing": also})
	if err != nil {
		t.Fatal(err)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	body := `{"name":"a","price":"0.001","colour":1}`
	req := httptest.NewRequest(http.MethodPost, "/things/1", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	e := decodeError(t, rec.Body)
	want := []FieldError{
		invalid.Bound(invalid.Body, "name", invalid.TooShort, "2"),
		invalid.New(invalid.Body, "colour", invalid.UnknownField),
		invalid.Bound(invalid.Body, "price", invalid.Precision, "2"),
	}
	if rec.Code != http.StatusBadRequest || len(e.Details) != len(want) {
		t.Fatalf("got %d %+v, want 400 with %+v", rec.Code, e.Details, want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(e.Details, func(d FieldError) bool { return sameDetail(d, w) }) {
			t.Errorf("details %+v lack %+v", e.Details, w)
		}
	}
	if sawBody != body {
		t.Errorf("the surface's checks saw %q, want the body", sawBody)
	}
}

// TestValidator_UnknownOperationStopsTheStart: checks keyed by an id the spec does not have (a
// typo, the spec's own spelling instead of the generated one) are an error, not checks that never
// run; so is such an id handed to ClientAddrFor, which would count every client as one.
func TestValidator_UnknownOperationStopsTheStart(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(codesSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	none := func(*http.Request, []byte) []FieldError { return nil }
	for _, id := range []string{"UpdateThng", "updateThing"} {
		if _, err := Validator(spec, FieldChecks{id: none}); err == nil || !strings.Contains(err.Error(), id) {
			t.Errorf("Validator with checks of %s: error %v, want one naming it", id, err)
		}
		if _, err := ClientAddrFor[StrictHandlerFunc](spec, id); err == nil || !strings.Contains(err.Error(), id) {
			t.Errorf("ClientAddrFor(%s): error %v, want one naming it", id, err)
		}
	}
	if _, err := ClientAddrFor[StrictHandlerFunc](spec, "UpdateThing"); err != nil {
		t.Errorf("ClientAddrFor(UpdateThing): %v", err)
	}
}

// StrictHandlerFunc is the generated strict handlers' shape, for ClientAddrFor in tests.
type StrictHandlerFunc func(ctx context.Context, w http.ResponseWriter, r *http.Request, request any) (any, error)

// TestStrictRequestError_Malformed: a body the strict handler cannot decode is `body: malformed`.
func TestStrictRequestError_Malformed(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	StrictRequestError(rec, httptest.NewRequest(http.MethodPost, "/x", nil), errors.New("unexpected EOF"))
	e := decodeError(t, rec.Body)
	if rec.Code != http.StatusBadRequest || len(e.Details) != 1 || !sameDetail(e.Details[0], invalid.New(invalid.Body, "body", invalid.Malformed)) {
		t.Fatalf("got %d %+v", rec.Code, e)
	}
}
