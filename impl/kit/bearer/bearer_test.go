package bearer

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/web"
)

type who struct{ name string }

func resolver(ctx context.Context, tok string) (who, error) {
	switch tok {
	case "good":
		return who{"ada"}, nil
	case "boom":
		return who{}, errors.New("database down")
	}
	return who{}, ErrInvalid
}

func TestBearer_Answers(t *testing.T) {
	a := New(resolver, Options[who]{Realm: "test", QueryParam: "access_token",
		Public: func(r *http.Request) bool { return r.URL.Path == "/open" }})
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := From[who](r.Context())
		_, _ = w.Write([]byte(p.name + "/" + Token[who](r.Context())))
		if !ok {
			_, _ = w.Write([]byte("anonymous"))
		}
	}))
	for _, tc := range []struct {
		name, target, header string
		status               int
		body, challenge      string
	}{
		{"header", "/x", "Bearer good", 200, "ada/good", ""},
		{"scheme is case-insensitive", "/x", "bearer good", 200, "ada/good", ""},
		{"query parameter", "/x?access_token=good", "", 200, "ada/good", ""},
		{"query wins over header", "/x?access_token=good", "Bearer nope", 200, "ada/good", ""},
		{"missing", "/x", "", 401, "unauthorized", `Bearer realm="test"`},
		{"other scheme", "/x", "Basic good", 401, "unauthorized", `Bearer realm="test"`},
		{"unknown", "/x", "Bearer nope", 401, "unauthorized", `Bearer realm="test", error="invalid_token"`},
		{"resolver failure is opaque", "/x", "Bearer boom", 500, "internal_error", ""},
		{"public needs none", "/open", "", 200, "/anonymous", ""},
		{"public ignores a bad one", "/open", "Bearer nope", 200, "/anonymous", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.target, nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.body) || w.Header().Get("WWW-Authenticate") != tc.challenge {
				t.Fatalf("got %d %q challenge %q", w.Code, w.Body, w.Header().Get("WWW-Authenticate"))
			}
			if strings.Contains(w.Body.String(), "database down") {
				t.Fatal("internal error echoed")
			}
			// A missing and a refused token get the same message (the challenge tells them
			// apart), the one every surface sends with the code.
			if w.Code >= 400 {
				var e web.Error
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
					t.Fatal(err)
				}
				if want, _ := web.OneMessage(e.Code); e.Message != want {
					t.Fatalf("%s message %q, want %q", e.Code, e.Message, want)
				}
			}
		})
	}
}

func TestPublicBySpec(t *testing.T) {
	doc := `
openapi: 3.0.3
info: {title: t, version: "1"}
security: [{bearerAuth: []}]
paths:
  /api/brand/list:
    get: {security: [], responses: {"200": {description: ok}}}
  /api/brand/{id}:
    get: {security: [], responses: {"200": {description: ok}}}
    put: {responses: {"200": {description: ok}}}
  /oauth/token:
    post: {security: [{}, {basic: []}], responses: {"200": {description: ok}}}
  /orders/{id}/take:
    patch: {responses: {"200": {description: ok}}}
components:
  securitySchemes:
    bearerAuth: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic}
`
	spec, err := openapi3.NewLoader().LoadFromData([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	public := PublicBySpec(spec)
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/api/brand/list", true},
		{"GET", "/api/brand/abc", true},
		{"PUT", "/api/brand/abc", false},
		{"PUT", "/api/brand/list", false}, // a template match is still the secured operation
		{"POST", "/oauth/token", true},
		{"PATCH", "/orders/1/take", false},
		{"PATCH", "/orders//take", true}, // no operation: the router answers 404 to anyone
		{"PATCH", "/orders/1/take/x", true},
		{"DELETE", "/api/brand/abc", true}, // no such method: 405 to anyone
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if got := public(r); got != tc.want {
			t.Errorf("%s %s: public %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
