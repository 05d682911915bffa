package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_HostileInputRefused sends, to the whole server over a socket, the hostile inputs of
// each surface that used to answer 500, store garbage or cost seconds of CPU. Each must get a 400
// naming the field (the OAuth token endpoint: its RFC 6749 invalid_request), and every answer must
// match its spec.
func TestServer_HostileInputRefused(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	clients := map[string]*http.Client{}
	for _, name := range specNames {
		data, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		spec, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = apitest.Client(t, spec)
	}
	do := func(surface, method, target, ctype, body string, header http.Header) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := clients[surface].Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	const form, js = "application/x-www-form-urlencoded", "application/json"

	// Tokens of a customer (orders) and the brands admin, from the dev data.
	q := url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret},
		"username": {"alice"}, "password": {"alice-password"}}
	status, b := do("orders", "POST", "/oauth/token", form, q.Encode(), nil)
	var ot struct {
		AccessToken string `json:"access_token"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &ot) != nil {
		t.Fatalf("orders login: %d %s", status, b)
	}
	status, b = do("brands", "POST", "/api/user/login", form, url.Values{"email": {devdata.AdminEmail}, "password": {devdata.AdminPassword}}.Encode(), nil)
	var bt struct {
		Token string `json:"token"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &bt) != nil {
		t.Fatalf("brands login: %d %s", status, b)
	}
	customer := http.Header{"Authorization": {"Bearer " + ot.AccessToken}}
	admin := http.Header{"Authorization": {"Bearer " + bt.Token}}

	// A number beyond float64 on every money field of every surface (auth has none): orders' price,
	// which the spec types (the validator names its bound), and the prices inside a brand's
	// products, which the spec leaves free (the screen notes the place, web.StrictRequestError
	// answers it); never "body malformed".
	t.Run("money beyond float64", func(t *testing.T) {
		for _, tc := range []struct {
			surface, method, target, body string
			header                        http.Header
			field, code, limit            string // limit "" when the field has no bound
		}{
			{"orders", "POST", "/orders", `{"description":"x","price":1e309}`, customer, "price", "too_large", "1000000"},
			{"orders", "POST", "/orders", `{"description":"x","price":-1e309}`, customer, "price", "too_small", "0.01"},
			{"brands", "POST", "/api/brand", `{"name":"n","products":[{"name":"a","price":1e309}]}`, admin, "products.0.price", "too_large", ""},
			{"brands", "POST", "/api/brand", `{"name":"n","products":[{"price":1},{"price":-1E+400}]}`, admin, "products.1.price", "too_small", ""},
			{"brands", "PATCH", "/api/brand/655e1f2a000000000000000c" /* Aurora Skis */, `{"products":[{"sizes":[{"price":1e309}]}]}`, admin, "products.0.sizes.0.price", "too_large", ""},
		} {
			status, b := do(tc.surface, tc.method, tc.target, js, tc.body, tc.header)
			var e struct {
				Code    string `json:"code"`
				Details []struct {
					Field, Code string
					Limit       json.Number
				}
			}
			if err := json.Unmarshal(b, &e); err != nil || status != http.StatusBadRequest || e.Code != "validation_failed" || len(e.Details) != 1 {
				t.Errorf("%s %s %s: %d %s, want 400 validation_failed with one detail", tc.method, tc.target, tc.body, status, b)
				continue
			}
			if d := e.Details[0]; d.Field != tc.field || d.Code != tc.code || string(d.Limit) != tc.limit {
				t.Errorf("%s %s %s: detail %+v, want %s %s limit %q", tc.method, tc.target, tc.body, d, tc.field, tc.code, tc.limit)
			}
		}
	})

	deep := strings.Repeat(`{"a":`, 9996) + "1" + strings.Repeat("}", 9996)
	tests := []struct {
		name, surface, method, target, ctype, body string
		header                                     http.Header
		field                                      string // "" for the OAuth body
	}{
		// Item 6: number literals are bounded before they are parsed.
		{"million-digit price", "orders", "POST", "/orders", js, `{"description":"x","price":0.01` + strings.Repeat("0", 1_000_000) + `}`, customer, "price"},
		{"long page number", "orders", "GET", "/orders?page=" + strings.Repeat("1", 40), "", "", customer, "page"},
		{"long path id", "orders", "GET", "/users/" + strings.Repeat("1", 40) + "/orders", "", "", customer, "id"},
		{"long number in products", "brands", "POST", "/api/brand", js, `{"name":"n","products":[{"price":1` + strings.Repeat("0", 40) + `}]}`, admin, "products.0.price"},
		// Item 7: valid UTF-8 without NUL.
		{"NUL in login email (form)", "brands", "POST", "/api/user/login", form, "email=a%00@b.c&password=pw", nil, "email"},
		{"invalid UTF-8 in login email (form)", "brands", "POST", "/api/user/login", form, "email=a%FF@b.c&password=pw", nil, "email"},
		{"escaped NUL in login email (JSON)", "brands", "POST", "/api/user/login", js, `{"email":"a\u0000@b.c","password":"pw"}`, nil, "email"},
		{"raw invalid UTF-8 in JSON", "brands", "POST", "/api/user/register", js, "{\"name\":\"\xff\",\"email\":\"x@y.z\",\"password\":\"long-enough-pw\"}", nil, "name"},
		{"NUL in products", "brands", "POST", "/api/brand", js, `{"name":"n","products":[{"name":"a\u0000"}]}`, admin, "products.0.name"},
		{"NUL in a key", "brands", "POST", "/api/brand", js, `{"name":"n","products":[{"a\u0000":1}]}`, admin, "products.0"},
		{"NUL in a query parameter", "brands", "GET", "/api/brand/list?x=%00", "", "", nil, "x"},
		{"invalid UTF-8 in a path segment", "brands", "GET", "/api/brand/%FF", "", "", nil, "id"},
		{"invalid UTF-8 in a header", "auth", "GET", "/auth/user", "", "", http.Header{"X-Xsrf-Token": {"\xff"}}, "X-Xsrf-Token"},
		{"invalid UTF-8 in the X-JWT header", "auth", "GET", "/auth/user", "", "", http.Header{"X-Jwt": {"\xff"}}, "X-Jwt"},
		{"invalid UTF-8 in the JWT cookie", "auth", "GET", "/auth/user", "", "", http.Header{"Cookie": {"JWT=\xff"}}, "JWT"},
		{"NUL in the token endpoint's form", "orders", "POST", "/oauth/token", form, "grant_type=password&username=a%00&password=p&client_id=" + devOrdersClientID + "&client_secret=" + devOrdersClientSecret, nil, ""},
		{"NUL in the direct login (auth)", "auth", "POST", "/auth/local/login", js, `{"user":"demo\u0000","passwd":"x"}`, nil, "user"},
		// Item 8: strict JSON.
		{"trailing data", "orders", "POST", "/orders", js, `{"description":"x","price":1}garbage`, customer, "body"},
		{"second value", "orders", "POST", "/orders", js, `{"description":"x","price":1} {}`, customer, "body"},
		{"duplicate key", "orders", "POST", "/orders", js, `{"description":"x","price":1,"price":999999}`, customer, "price"},
		{"duplicate key spelt with an escape", "orders", "POST", "/orders", js, `{"description":"x","price":1,"pr\u0069ce":999999}`, customer, "price"},
		{"deep products", "brands", "POST", "/api/brand", js, `{"name":"n","products":[` + deep + `]}`, admin, "products.0" + strings.Repeat(".a", 14)},
		{"wide products member", "brands", "POST", "/api/brand", js, `{"name":"n","products":[{"tags":[` + strings.Repeat("1,", 1000) + `1]}]}`, admin, "products.0.tags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, b := do(tc.surface, tc.method, tc.target, tc.ctype, tc.body, tc.header)
			if status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %.300s", status, b)
			}
			if tc.field == "" {
				var e struct {
					Error string `json:"error"`
				}
				if json.Unmarshal(b, &e) != nil || e.Error != "invalid_request" {
					t.Fatalf("body %s, want an RFC 6749 invalid_request", b)
				}
				return
			}
			var e struct {
				Code    string `json:"code"`
				Message string `json:"message"`
				Details []struct{ Field, Message string }
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("body %s: %v", b, err)
			}
			if e.Code != "validation_failed" || len(e.Details) == 0 || e.Details[0].Field != tc.field {
				t.Fatalf("body %s, want validation_failed naming %q", b, tc.field)
			}
			// The screen is one more layer that refuses input; its message is the code's one message.
			if e.Message != web.MessageValidation {
				t.Fatalf("message %q, want %q", e.Message, web.MessageValidation)
			}
		})
	}
}
