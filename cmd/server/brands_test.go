package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_BrandsDevData starts the whole server twice in dev mode on one database: docs/brands.md's
// admin and demo user log in, the prepared brands are listed, and the second start adds nothing.
// Then a prod start creates the configured first admin and nothing else.
func TestServer_BrandsDevData(t *testing.T) {
	t.Parallel()
	spec, err := brandsapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	c := apitest.Client(t, spec)
	call := func(method, u string, form url.Values, v any) int {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, u, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if v != nil && res.StatusCode < 300 {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s %s: %v: %s", method, u, err, b)
			}
		}
		return res.StatusCode
	}
	login := func(base, email, pw string) (string, int) {
		var tok brandsapi.TokenResponse
		status := call("POST", base+"/api/user/login", url.Values{"email": {email}, "password": {pw}}, &tok)
		return tok.Token, status
	}
	me := func(base, tok string) brandsapi.User {
		var u brandsapi.User
		if status := call("GET", base+"/api/user/me?access_token="+url.QueryEscape(tok), nil, &u); status != http.StatusOK {
			t.Fatalf("me: %d", status)
		}
		return u
	}
	check := func(base string) {
		t.Helper()
		tok, status := login(base, devdata.AdminEmail, devdata.AdminPassword)
		if status != http.StatusOK || !me(base, tok).IsAdmin {
			t.Fatalf("dev admin cannot log in (%d) or is no admin", status)
		}
		tok, status = login(base, devdata.DemoEmail, devdata.DemoPassword)
		if status != http.StatusOK {
			t.Fatalf("demo user cannot log in: %d", status)
		}
		if u := me(base, tok); u.IsAdmin || len(u.Subscriptions) != 2 {
			t.Fatalf("demo user: admin %v, %d subscriptions", u.IsAdmin, len(u.Subscriptions))
		}
		var all, featured []brandsapi.Brand
		call("GET", base+"/api/brand/list", nil, &all)
		call("GET", base+"/api/brand/list/featured", nil, &featured)
		if len(all) < 10 || len(all) >= len(devdata.Brands) || len(featured) < 3 {
			t.Fatalf("dev data lists %d available of %d brands, %d featured", len(all), len(devdata.Brands), len(featured))
		}
		if all[0].SubscriberCount != 1 {
			t.Fatalf("first brand has %d subscribers, want the demo user only", all[0].SubscriberCount)
		}
	}

	dbURL := dbtest.NewURL(t)
	base, stop := routerServer(t, "-mode", "dev", "-database-url", dbURL)
	check(base)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base, _ = routerServer(t, "-mode", "dev", "-database-url", dbURL)
	check(base)

	prod, _ := routerServer(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef",
		"-brands-admin-email", "Boss@Example.com", "-brands-admin-password", "boss-password")
	if _, status := login(prod, devdata.DemoEmail, devdata.DemoPassword); status != http.StatusUnauthorized {
		t.Fatalf("prod mode has the demo user: %d", status)
	}
	var all []brandsapi.Brand
	if call("GET", prod+"/api/brand/list", nil, &all); len(all) != 0 {
		t.Fatalf("prod mode has %d prepared brands", len(all))
	}
	tok, status := login(prod, "boss@example.com", "boss-password")
	if status != http.StatusOK || !me(prod, tok).IsAdmin {
		t.Fatalf("prod first admin cannot log in (%d) or is no admin", status)
	}
}
