package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// devCall is one request of the dev reset tests: through the client of the surface's spec (its
// answers validated against it) or, for paths no spec has (/dev/reset, /docs), a plain client.
type devCall struct {
	t       *testing.T
	base    string
	clients map[string]*http.Client
}

func newDevCall(t *testing.T, base string) devCall {
	return devCall{t: t, base: base, clients: map[string]*http.Client{
		"orders": apitest.Client(t, apitest.Spec(t, "orders.yaml")),
		"brands": apitest.Client(t, apitest.Spec(t, "brands.yaml")),
		"auth":   apitest.Client(t, apitest.Spec(t, "auth.yaml")),
		"":       http.DefaultClient,
	}}
}

// do sends method path with body of type ctype ("" for none) and bearer token tok ("" for none) and
// returns the status and body.
func (c devCall) do(surface, method, path, ctype, body, tok string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.clients[surface].Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// want fails unless the status is status and the body holds contains.
func (c devCall) want(what string, status int, contains string, got int, body string) {
	c.t.Helper()
	if got != status || !strings.Contains(body, contains) {
		c.t.Fatalf("%s: %d %.300s, want %d with %q", what, got, body, status, contains)
	}
}

// ordersToken signs in to the orders API with the dev client.
func (c devCall) ordersToken(user, password string) string {
	c.t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {user}, "password": {password},
		"client_id": {"triad-orders"}, "client_secret": {"triad-orders-secret"}}
	status, body := c.do("orders", "POST", "/oauth/token", "application/x-www-form-urlencoded", form.Encode(), "")
	c.want("orders token of "+user, 200, `"access_token"`, status, body)
	return c.field(body, "access_token")
}

// field is a string field of a JSON object.
func (c devCall) field(body, name string) string {
	c.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		c.t.Fatalf("%v: %s", err, body)
	}
	s, _ := v[name].(string)
	return s
}

// TestDevReset_PutsTheDemoDataBack: what the Swagger walk uses up (an order cancelled, the
// examples' new users registered, a brand deleted) is back after dev mode's POST /dev/reset,
// under the same ids, and the tokens issued before are refused. The reset takes JSON only (a
// form of another site cannot send it), and the docs page offers it in dev mode.
func TestDevReset_PutsTheDemoDataBack(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	c := newDevCall(t, base)
	erin := `{"username":"erin","password":"erin-password","userType":"Customer"}`
	ada := url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"ada-password"}}.Encode()
	const velvet = "/api/brand/655e1f2a000000000000000b"

	alice := c.ordersToken("alice", "alice-password")
	s, b := c.do("orders", "PATCH", "/orders/2/cancel", "", "", alice)
	c.want("cancel order 2", 200, `"CANCELLED"`, s, b)
	s, b = c.do("orders", "POST", "/users", "application/json", erin, "")
	c.want("register erin", 201, `"erin"`, s, b)
	s, b = c.do("brands", "POST", "/api/user/register", "application/x-www-form-urlencoded", ada, "")
	c.want("register Ada", 201, `"token"`, s, b)
	s, b = c.do("brands", "POST", "/api/user/login", "application/x-www-form-urlencoded",
		url.Values{"email": {"admin@brands.test"}, "password": {"admin-password"}}.Encode(), "")
	c.want("admin login", 200, `"token"`, s, b)
	admin := c.field(b, "token")
	s, b = c.do("brands", "DELETE", velvet, "", "", admin)
	c.want("delete Velvet Records", 200, "deleted", s, b)

	s, b = c.do("", "POST", "/dev/reset", "application/x-www-form-urlencoded", "a=b", "")
	c.want("a reset as a form", 415, "unsupported_media_type", s, b)
	s, b = c.do("", "POST", "/dev/reset", "application/json", "{}", "")
	// orders and brands first, in mount order; a surface `make new-surface` added follows them.
	c.want("the reset", 200, `"surfaces":["orders","brands"`, s, b)

	s, b = c.do("orders", "GET", "/authenticated", "", "", alice)
	c.want("alice's token from before the reset", 401, "", s, b)
	alice = c.ordersToken("alice", "alice-password")
	s, b = c.do("orders", "GET", "/orders/2", "", "", alice)
	c.want("order 2 after the reset", 200, `"WAITING"`, s, b)
	s, b = c.do("orders", "POST", "/users", "application/json", erin, "")
	c.want("register erin again", 201, `"id":5`, s, b)
	s, b = c.do("brands", "POST", "/api/user/register", "application/x-www-form-urlencoded", ada, "")
	c.want("register Ada again", 201, `"token"`, s, b)
	s, b = c.do("brands", "GET", "/api/user/me", "", "", admin)
	c.want("the admin's token from before the reset", 401, "", s, b)
	s, b = c.do("brands", "GET", velvet, "", "", "")
	c.want("Velvet Records after the reset", 200, "Velvet Records", s, b)

	s, b = c.do("", "GET", "/docs/", "", "", "")
	c.want("the docs page in dev mode", 200, `id="dev-reset-button"`, s, b)
}

// TestDevReset_OnlyInDevMode: outside dev mode there is no reset, no reset button on the docs
// page and no dev provider whose example callback would log anyone in.
func TestDevReset_OnlyInDevMode(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef")
	c := newDevCall(t, base)
	s, b := c.do("", "POST", "/dev/reset", "application/json", "{}", "")
	c.want("the reset in prod mode", 404, "not_found", s, b)
	s, b = c.do("", "GET", "/docs/", "", "", "")
	if s != 200 || strings.Contains(b, "dev-reset") {
		t.Fatalf("the docs page in prod mode: %d, dev bar shown: %v", s, strings.Contains(b, "dev-reset"))
	}
	s, b = c.do("auth", "GET", "/auth/dev/callback?state="+provider.DevExampleState+"&code="+provider.DevExampleCode, "", "", "")
	c.want("the dev example callback in prod mode", 400, "unknown_provider", s, b)
}
