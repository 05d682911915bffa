package web

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func decodeError(t *testing.T, body io.Reader) Error {
	t.Helper()
	var e Error
	if err := json.NewDecoder(body).Decode(&e); err != nil {
		t.Fatalf("body is not the JSON error shape: %v", err)
	}
	return e
}

func TestRecover_PanicBecomesOpaqueJSON500(t *testing.T) {
	t.Parallel()
	h := WithRequestID(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))(Recover(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret dsn postgres://u:p@db")
	}))))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "postgres://") || strings.Contains(rec.Body.String(), "panic") {
		t.Fatalf("500 body leaks internals: %s", rec.Body)
	}
	e := decodeError(t, rec.Body)
	if e.Code != CodeInternal || e.RequestID == "" || e.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("error = %+v, want internal_error stamped with the response's request id %q", e, rec.Header().Get("X-Request-Id"))
	}
}

func TestWithRequestID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		keep     bool
	}{
		{"caller id kept", "abc-123_x.y", true},
		{"log injection replaced", "a\nb", false},
		{"too long replaced", strings.Repeat("a", 65), false},
		{"missing generated", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen string
			h := WithRequestID(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.in != "" {
				req.Header.Set("X-Request-Id", tc.in)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if seen == "" || seen != rec.Header().Get("X-Request-Id") {
				t.Fatalf("context id %q, header %q: want equal and non-empty", seen, rec.Header().Get("X-Request-Id"))
			}
			if (seen == tc.in) != tc.keep {
				t.Fatalf("id %q from caller %q: keep=%v", seen, tc.in, tc.keep)
			}
		})
	}
}

func TestLimitBody(t *testing.T) {
	t.Parallel()
	h := LimitBody(10)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			if IsTooLarge(err) {
				WriteError(w, r, http.StatusRequestEntityTooLarge, Error{Code: CodeTooLarge, Message: "too large"})
				return
			}
			t.Errorf("unexpected read error: %v", err)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		want    int
	}{
		{"within limit", "0123456789", false, http.StatusNoContent},
		{"declared too large", "0123456789A", false, http.StatusRequestEntityTooLarge},
		{"streamed too large", "0123456789A", true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d", rec.Code, tc.want)
			}
			if tc.want == http.StatusRequestEntityTooLarge && decodeError(t, rec.Body).Code != CodeTooLarge {
				t.Fatal("413 without the request_too_large code")
			}
		})
	}
}

const specYAML = `
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
paths:
  /things:
    post:
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 10}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 3}
      responses:
        "204": {description: ok}
`

func TestValidator(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	validate, err := Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	tests := []struct {
		name, method, target, body string
		want                       int
		wantField                  string
	}{
		{"valid request passes (servers cleared)", http.MethodPost, "/things?limit=5", `{"name":"abc"}`, http.StatusNoContent, ""},
		{"body field too long", http.MethodPost, "/things", `{"name":"abcd"}`, http.StatusBadRequest, "name"},
		{"missing required field", http.MethodPost, "/things", `{}`, http.StatusBadRequest, "name"},
		{"query over maximum", http.MethodPost, "/things?limit=11", `{"name":"a"}`, http.StatusBadRequest, "limit"},
		{"every invalid field reported", http.MethodPost, "/things?limit=11", `{"name":"abcd"}`, http.StatusBadRequest, "name"},
		{"unknown route", http.MethodPost, "/other", `{}`, http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusNoContent {
				return
			}
			e := decodeError(t, rec.Body)
			if tc.wantField == "" {
				return
			}
			if e.Code != CodeValidation {
				t.Fatalf("code = %q, want %q", e.Code, CodeValidation)
			}
			for _, d := range e.Details {
				if strings.HasPrefix(d.Field, tc.wantField) {
					return
				}
			}
			t.Fatalf("details %+v do not name field %q", e.Details, tc.wantField)
		})
	}
}

// TestValidator_AllViolationsAtOnce: a client fixing a form sees every problem in one answer.
// TestValidator_LeavesTheSpecAsItIs: one parsed document serves every mount of a surface (and,
// in tests, many at once), so the validator validates against its own copy: the spec keeps its
// servers and its security, while the validator still matches paths on any host and leaves
// authentication to the surface (a request without credentials passes it).
func TestValidator_LeavesTheSpecAsItIs(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML + `components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
security: [{bearer: []}]
`))
	if err != nil {
		t.Fatal(err)
	}
	op := spec.Paths.Find("/things").Post
	op.Security = &openapi3.SecurityRequirements{{"bearer": {}}}
	validate, err := Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Servers) != 1 || len(spec.Security) != 1 || spec.Paths.Find("/things").Post != op || len(*op.Security) != 1 {
		t.Fatalf("the validator changed the spec: servers %v, security %v, operation security %v", spec.Servers, spec.Security, op.Security)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	req := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(`{"name":"abc"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent {
		t.Fatalf("a valid request without credentials: %d %s, want 204 (authentication is the surface's)", rec.Code, rec.Body)
	}
}

func TestValidator_AllViolationsAtOnce(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	validate, err := Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	req := httptest.NewRequest(http.MethodPost, "/things?limit=11", strings.NewReader(`{"name":"abcd"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	e := decodeError(t, rec.Body)
	fields := map[string]bool{}
	for _, d := range e.Details {
		fields[d.Field] = true
	}
	if rec.Code != http.StatusBadRequest || e.Message != MessageValidation || !fields["limit"] || !fields["name"] {
		t.Fatalf("got %d %+v, want 400 %q naming limit and name", rec.Code, e, MessageValidation)
	}
}

// TestValidator_WrongContentTypeIs415: a body of a type the operation does not take is refused as
// such (415), not as a field problem, whatever the surface.
func TestValidator_WrongContentTypeIs415(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	validate, err := Validator(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := validate(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		t.Run(ct, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(`{"name":"abc"}`))
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			e := decodeError(t, rec.Body)
			if rec.Code != http.StatusUnsupportedMediaType || e.Code != CodeUnsupportedMediaType || e.Message != MessageUnsupportedMedia {
				t.Fatalf("got %d %+v, want 415 %s", rec.Code, e, CodeUnsupportedMediaType)
			}
		})
	}
}
