package apitest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

const specYAML = `
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties: {id: {type: integer}}
`

func TestValidator_Check(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	v := NewValidator(t, spec)
	req := httptest.NewRequest(http.MethodGet, "http://example.test/things/7", nil)
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		req     *http.Request
		status  int
		body    string
		wantErr bool
	}{
		{"conforming body", req, 200, `{"id":7}`, false},
		{"missing required field", req, 200, `{"name":"x"}`, true},
		{"undocumented status", req, 500, `{"id":7}`, true},
		{"route not in spec", httptest.NewRequest(http.MethodGet, "/nowhere", nil), 200, `{}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check(tc.req, tc.status, json, []byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check() error = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}
