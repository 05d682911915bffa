package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_WrongContentTypeIs415Everywhere: through the whole server (input screen, body limit,
// spec validators, the auth library, the token endpoint), a body whose Content-Type the operation
// does not take is 415 with the shared unsupported_media_type body on each surface; the auth
// routes in particular, whose library answers it itself, once answered 400. Each answer is also
// validated against its surface's spec.
func TestServer_WrongContentTypeIs415Everywhere(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t))
	authSpec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	brandsSpec, err := brandsapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	// The published orders document, with the token endpoint the generated package leaves out.
	data, err := api.FS.ReadFile("orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ordersSpec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, ctype, body string
		spec                    *openapi3.T
	}{
		{"auth direct login, text", "/auth/local/login", "text/plain", "user=demo&passwd=demo-password", authSpec},
		{"auth direct login, XML", "/auth/local/login", "application/xml", "<user>demo</user>", authSpec},
		{"brands registration, text", "/api/user/register", "text/plain", "name=Ada", brandsSpec},
		{"orders registration, text", "/users", "text/plain", `{"username":"ada"}`, ordersSpec},
		{"orders token, JSON", "/oauth/token", "application/json", `{"grant_type":"password"}`, ordersSpec},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", base+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			resp, err := apitest.Client(t, tc.spec).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var e web.Error
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
			}
			if resp.StatusCode != http.StatusUnsupportedMediaType || e.Code != web.CodeUnsupportedMediaType ||
				e.Message != web.MessageUnsupportedMedia || e.RequestID == "" {
				t.Fatalf("got %d %s, want 415 with the shared unsupported_media_type body", resp.StatusCode, b)
			}
		})
	}
}
