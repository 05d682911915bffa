package screen

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		field      string       // "" when the body is accepted
		code       invalid.Code // the rule broken
	}{
		{"object", `{"a":1,"b":[1,2,{"c":"d"}],"e":null,"f":true}`, "", ""},
		{"whitespace after the value", "{\"a\":1} \n\t", "", ""},
		{"scalar document", `12.5`, "", ""},
		{"unicode text", `{"name":"Ada Λόβλεϊς ☕"}`, "", ""},
		{"32-character number", `{"price":` + "1" + strings.Repeat("0", 31) + `}`, "", ""},
		{"same key in sibling objects", `[{"a":1},{"a":2}]`, "", ""},
		{"16 levels", strings.Repeat("[", 16) + strings.Repeat("]", 16), "", ""},
		{"1000 members", "[" + strings.Repeat("0,", 999) + "0]", "", ""},

		{"33-character number", `{"price":` + "1" + strings.Repeat("0", 32) + `}`, "price", invalid.TooLong},
		{"long exponent form", `{"a":[1,2e` + strings.Repeat("1", 40) + `]}`, "a.1", invalid.TooLong},
		{"trailing garbage", `{"a":1}garbage`, "body", invalid.Malformed},
		{"second value", `{"a":1} {"a":2}`, "body", invalid.Malformed},
		{"trailing after scalar", `1 2`, "body", invalid.Malformed},
		{"duplicate key", `{"price":1,"price":999999}`, "price", invalid.DuplicateKey},
		{"duplicate key by escape", `{"price":1,"\u0070rice":2}`, "price", invalid.DuplicateKey},
		{"nested duplicate", `{"a":{"b":1,"b":2}}`, "a.b", invalid.DuplicateKey},
		{"17 levels", strings.Repeat("[", 17) + strings.Repeat("]", 17), "0" + strings.Repeat(".0", 15), invalid.TooDeep},
		{"1001 members", `{"a":[` + strings.Repeat("0,", 1000) + "0]}", "a", invalid.TooMany},
		{"escaped NUL", `{"email":"a\u0000b"}`, "email", invalid.Encoding},
		{"escaped NUL in a key", `{"x":{"a\u0000":1}}`, "x", invalid.Encoding},
		{"invalid UTF-8 value", "{\"a\":[\"ok\",\"\xff\"]}", "a.1", invalid.Encoding},
		{"invalid UTF-8 key", "{\"a\":{\"\xc3\":1}}", "a", invalid.Encoding},
		{"syntax error", `{"a":}`, "body", invalid.Malformed},
		{"truncated", `{"a":[1,2`, "body", invalid.Malformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Limits{}.CheckJSON([]byte(tc.body))
			switch {
			case tc.field == "" && p != nil:
				t.Fatalf("refused: %v", p)
			case tc.field != "" && p == nil:
				t.Fatal("accepted")
			case tc.field != "" && (p.Field != tc.field || p.Code != tc.code || p.In != invalid.Body):
				t.Fatalf("got %+v, want body %q %s", *p, tc.field, tc.code)
			}
		})
	}
}

// The checker agrees with encoding/json on what is valid JSON: whatever it accepts decodes.
func TestCheckJSON_AcceptedDecodes(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `[]`, `"x"`, `{"a":[{"b":{"c":[1.5e3,-0,"\u00e9"]}}]}`} {
		if p := (Limits{}).CheckJSON([]byte(body)); p != nil {
			t.Fatalf("%s refused: %v", body, p)
		}
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s accepted but does not decode: %v", body, err)
		}
	}
}

func TestCheckValues(t *testing.T) {
	t.Parallel()
	numeric := func(name string) bool { return name == "page" }
	tests := []struct {
		name, raw string
		field     string
		code      invalid.Code
	}{
		{"plain", "a=1&b=two&page=3", "", ""},
		{"encoded unicode", "name=%CE%9B+x", "", ""},
		{"empty pairs", "&&a=&", "", ""},
		{"long text is not a number", "q=" + strings.Repeat("1", 40), "", ""},
		{"long number", "page=" + strings.Repeat("1", 33), "page", invalid.TooLong},
		{"NUL value", "email=a%00b", "email", invalid.Encoding},
		{"invalid UTF-8 value", "email=a%FFb", "email", invalid.Encoding},
		{"bad escape", "email=a%zz", "email", invalid.Encoding},
		{"NUL in a name", "a%00=1", "parameter", invalid.Encoding},
		{"invalid UTF-8 name", "%FF=1", "parameter", invalid.Encoding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Limits{}.CheckValues(invalid.Query, tc.raw, numeric)
			switch {
			case tc.field == "" && p != nil:
				t.Fatalf("refused: %v", p)
			case tc.field != "" && p == nil:
				t.Fatal("accepted")
			case tc.field != "" && (p.Field != tc.field || p.Code != tc.code || p.In != invalid.Query):
				t.Fatalf("got %+v, want query %q %s", *p, tc.field, tc.code)
			}
		})
	}
}

const specYAML = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: integer}}
    post:
      parameters:
        - {name: limit, in: query, schema: {type: integer}}
        - {name: X-Thing, in: header, schema: {type: string}}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                count: {type: number}
                note: {type: string}
      responses:
        "204": {description: ok}
  /things/list:
    get:
      responses:
        "204": {description: ok}
components:
  securitySchemes:
    keyHeader: {type: apiKey, in: header, name: X-Key}
    keyCookie: {type: apiKey, in: cookie, name: Sess}
`

// The middleware refuses with the shared error body naming the field, and hands an accepted body
// on byte for byte.
func TestScreen_Handler(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	h := New(Options{}, spec).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusNoContent)
	}))
	long := strings.Repeat("9", 33)
	tests := []struct {
		name, method, target, ctype, body string
		header                            http.Header
		field                             string
	}{
		{"valid JSON passes", "POST", "/things/1", "application/json", `{"a":1}`, nil, ""},
		{"valid form passes", "POST", "/things/1?limit=2", "application/x-www-form-urlencoded", "count=1.5&note=" + long, nil, ""},
		{"other media types pass", "POST", "/things/1", "text/plain", "{\x00", nil, ""},
		{"literal route beats parameter route", "GET", "/things/list?x=" + long, "", "", nil, ""},
		{"JSON with a media type parameter", "POST", "/things/1", "application/json; charset=utf-8", `{"a":1,"a":2}`, nil, "a"},
		{"vendor JSON", "POST", "/things/1", "application/problem+json", `{"a":1}x`, nil, "body"},
		{"long numeric path parameter", "POST", "/things/" + long, "", "", nil, "id"},
		{"long numeric query parameter", "POST", "/things/1?limit=" + long, "", "", nil, "limit"},
		{"long numeric form field", "POST", "/things/1", "application/x-www-form-urlencoded", "count=" + long, nil, "count"},
		{"NUL in a path parameter", "POST", "/things/%00", "", "", nil, "id"},
		{"invalid UTF-8 in a literal segment", "GET", "/th%FFngs/list", "", "", nil, "path"},
		{"invalid UTF-8 in a declared header", "POST", "/things/1", "", "", http.Header{"X-Thing": {"\xff"}}, "X-Thing"},
		{"invalid UTF-8 in Authorization", "POST", "/things/1", "", "", http.Header{"Authorization": {"Bearer \xff"}}, "Authorization"},
		{"NUL in an apiKey header", "GET", "/things/list", "", "", http.Header{"X-Key": {"k\x00"}}, "X-Key"},
		{"invalid UTF-8 in an apiKey header", "GET", "/things/list", "", "", http.Header{"X-Key": {"\xff"}}, "X-Key"},
		{"NUL in an apiKey cookie", "GET", "/things/list", "", "", http.Header{"Cookie": {"a=1; Sess=k\x00"}}, "Sess"},
		{"invalid UTF-8 in an apiKey cookie", "GET", "/things/list", "", "", http.Header{"Cookie": {"a=1", "Sess=\xff"}}, "Sess"},
		{"another application's cookie passes", "GET", "/things/list", "", "", http.Header{"Cookie": {"other=\xff; Sess=fine"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got = ""
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			for k, v := range tc.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			web.WithRequestID(h).ServeHTTP(rec, req)
			if tc.field == "" {
				if rec.Code != http.StatusNoContent || got != tc.body {
					t.Fatalf("status %d, handler read %q; want 204 and the body unchanged (%s)", rec.Code, got, rec.Body)
				}
				return
			}
			var e web.Error
			if rec.Code != http.StatusBadRequest || json.Unmarshal(rec.Body.Bytes(), &e) != nil {
				t.Fatalf("status %d body %s, want 400 with the error body", rec.Code, rec.Body)
			}
			// Each refusal places the field where it was sent.
			in := map[string]invalid.In{"a": invalid.Body, "body": invalid.Body, "count": invalid.Body, "id": invalid.Path,
				"path": invalid.Path, "limit": invalid.Query, "X-Thing": invalid.Header, "Authorization": invalid.Header,
				"X-Key": invalid.Header, "Sess": invalid.Cookie}[tc.field]
			if e.Code != web.CodeValidation || len(e.Details) != 1 || e.Details[0].Field != tc.field ||
				e.Details[0].In != in || e.RequestID == "" {
				t.Fatalf("error %+v, want validation_failed naming %s %q with the request id", e, in, tc.field)
			}
		})
	}
}

// A body past the server's limit is a 413, as from the layers behind.
func TestScreen_TooLarge(t *testing.T) {
	t.Parallel()
	h := web.LimitBody(10)(New(Options{}).Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"a":"0123456789"}`))
	req.ContentLength = -1 // streamed: only reading finds out
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", rec.Code)
	}
}
