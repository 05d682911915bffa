package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
)

// The exact members of the seed's objects (spec validation alone would let extra ones through):
// register answers the seed's six fields, the profile adds isAdmin.
var (
	registeredKeys = []string{"_id", "token", "email", "name", "subscriptions", "created_at"}
	userKeys       = []string{"_id", "token", "email", "name", "isAdmin", "subscriptions", "created_at"}
	brandKeys      = []string{"_id", "name", "description", "url", "featuredImage", "availability", "isFeatured", "products", "subscriberCount"}
	tokenKeys      = []string{"token"}
	messageKeys    = []string{"message"}
)

// keysOf decodes body as one JSON object and returns its member names, sorted.
func keysOf(t *testing.T, what string, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: not a JSON object: %v: %s", what, err, body)
	}
	return m
}

func sortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wantKeys fails unless body is an object with exactly the members want.
func wantKeys(t *testing.T, what string, body []byte, want []string) map[string]json.RawMessage {
	t.Helper()
	m := keysOf(t, what, body)
	w := slices.Clone(want)
	sort.Strings(w)
	if got := sortedKeys(m); !slices.Equal(got, w) {
		t.Errorf("%s: members %v, want exactly %v", what, got, w)
	}
	return m
}

// wantNoStore fails unless an answer carrying a token forbids caching it.
func wantNoStore(t *testing.T, what string, r resp) {
	t.Helper()
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store (the body carries a token)", what, cc)
	}
}

// wantBrand checks one brand object's members and their JSON types.
func wantBrand(t *testing.T, what string, raw []byte) {
	t.Helper()
	m := wantKeys(t, what, raw, brandKeys)
	var b struct {
		ID              string           `json:"_id"`
		Availability    bool             `json:"availability"`
		IsFeatured      bool             `json:"isFeatured"`
		Products        []map[string]any `json:"products"`
		SubscriberCount json.Number      `json:"subscriberCount"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Errorf("%s: member types: %v: %s", what, err, raw)
		return
	}
	if !hexID.MatchString(b.ID) {
		t.Errorf("%s: _id %q", what, b.ID)
	}
	if string(m["products"]) == "null" || b.Products == nil {
		t.Errorf("%s: products %s, want an array", what, m["products"])
	}
	if _, err := b.SubscriberCount.Int64(); err != nil {
		t.Errorf("%s: subscriberCount %s is not an integer", what, b.SubscriberCount)
	}
}

// wantBrandArray checks a JSON array of brand objects and returns how many there are.
func wantBrandArray(t *testing.T, what string, body []byte) int {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(body, &arr); err != nil || arr == nil {
		t.Fatalf("%s: not a JSON array (%v): %s", what, err, body)
	}
	for _, raw := range arr {
		wantBrand(t, what+" element", raw)
	}
	return len(arr)
}

// wantError checks the one error shape of the surface: code and message, optionally details and requestId.
func wantError(t *testing.T, what string, body []byte) {
	t.Helper()
	m := keysOf(t, what, body)
	for k := range m {
		if !slices.Contains([]string{"code", "message", "details", "requestId"}, k) {
			t.Errorf("%s: unexpected member %q in the error body %s", what, k, body)
		}
	}
	if m["code"] == nil || m["message"] == nil {
		t.Errorf("%s: error body lacks code or message: %s", what, body)
	}
}

// TestShapes_ExactFields walks every route of the seed and checks each answer's members against
// the seed's field lists exactly: the user of register and me, login's token, the brand of every
// list, by-id read and subscription, and the message objects, and that every refusal has the one
// error shape. The answers that carry a token must not be cached.
func TestShapes_ExactFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.loadDevData()

	r := e.want(e.do(request{method: "POST", path: "/api/user/register",
		form: url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"correct-horse"}}}), http.StatusCreated)
	wantNoStore(t, "register", r)
	m := wantKeys(t, "register", r.body, registeredKeys)
	if string(m["subscriptions"]) != "[]" {
		t.Errorf("register: subscriptions %s, want []", m["subscriptions"])
	}
	var tok string
	if err := json.Unmarshal(m["token"], &tok); err != nil {
		t.Fatal(err)
	}

	r = e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {"ada@example.com"}, "password": {"correct-horse"}}}), http.StatusOK)
	wantNoStore(t, "login", r)
	wantKeys(t, "login", r.body, tokenKeys)

	for _, id := range []string{devdata.Brands[0].ID, devdata.Brands[1].ID} {
		r = e.want(e.do(request{method: "POST", path: "/api/subscribe/" + id, token: tok}), http.StatusOK)
		wantKeys(t, "subscribe", r.body, messageKeys)
	}
	r = e.want(e.do(request{method: "POST", path: "/api/unsubscribe/" + devdata.Brands[1].ID, token: tok}), http.StatusOK)
	wantKeys(t, "unsubscribe", r.body, messageKeys)

	r = e.want(e.do(request{method: "GET", path: "/api/user/me", token: tok}), http.StatusOK)
	wantNoStore(t, "me", r)
	m = wantKeys(t, "me", r.body, userKeys)
	if n := wantBrandArray(t, "me subscriptions", m["subscriptions"]); n != 1 {
		t.Errorf("me: %d subscriptions, want 1", n)
	}
	var isAdmin bool
	if err := json.Unmarshal(m["isAdmin"], &isAdmin); err != nil || isAdmin {
		t.Errorf("me: isAdmin %s, want false", m["isAdmin"])
	}

	for _, path := range []string{"/api/brand/list", "/api/brand/list/featured"} {
		r = e.want(e.do(request{method: "GET", path: path}), http.StatusOK)
		if n := wantBrandArray(t, path, r.body); n == 0 {
			t.Errorf("%s: empty with dev data loaded", path)
		}
	}
	r = e.want(e.do(request{method: "GET", path: "/api/brand/" + devdata.Brands[0].ID}), http.StatusOK)
	wantBrand(t, "brand by id", r.body)

	r = e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: tok, form: url.Values{"name": {"Ada King"}}}), http.StatusOK)
	wantKeys(t, "edit", r.body, messageKeys)
	r = e.want(e.do(request{method: "POST", path: "/api/user/reset", token: tok,
		form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"new-password"}}}), http.StatusOK)
	wantKeys(t, "reset", r.body, messageKeys)

	admin := e.admin()
	r = e.want(e.do(request{method: "POST", path: "/api/brand", token: admin, json: map[string]any{"name": "Shape"}}), http.StatusCreated)
	wantBrand(t, "create brand", r.body)
	id := keysOf(t, "create brand", r.body)["_id"]
	var bid string
	if err := json.Unmarshal(id, &bid); err != nil {
		t.Fatal(err)
	}
	r = e.want(e.do(request{method: "PATCH", path: "/api/brand/" + bid, token: admin, json: map[string]any{"isFeatured": true}}), http.StatusOK)
	wantBrand(t, "update brand", r.body)
	r = e.want(e.do(request{method: "DELETE", path: "/api/brand/" + bid, token: admin}), http.StatusOK)
	wantKeys(t, "delete brand", r.body, messageKeys)

	for _, c := range []struct {
		rq     request
		status int
	}{
		{request{method: "POST", path: "/api/user/register", form: url.Values{"name": {"X"}}}, http.StatusBadRequest},
		{request{method: "POST", path: "/api/user/register", form: url.Values{"name": {"X"}, "email": {"ADA@example.com"}, "password": {"password-1"}}}, http.StatusConflict},
		{request{method: "POST", path: "/api/user/login", form: url.Values{"email": {"ada@example.com"}, "password": {"wrong-password"}}}, http.StatusUnauthorized},
		{request{method: "GET", path: "/api/user/me"}, http.StatusUnauthorized},
		{request{method: "POST", path: "/api/user/reset", token: tok, form: url.Values{"currentPassword": {"wrong-password"}, "newPassword": {"newer-password"}}}, http.StatusForbidden},
		{request{method: "POST", path: "/api/brand", token: tok, json: map[string]any{"name": "X"}}, http.StatusForbidden},
		{request{method: "GET", path: "/api/brand/" + unknownID}, http.StatusNotFound},
		{request{method: "POST", path: "/api/subscribe/" + devdata.Brands[11].ID, token: tok}, http.StatusConflict},
	} {
		r := e.do(c.rq)
		if r.status != c.status {
			t.Errorf("%s %s: status %d, want %d: %s", c.rq.method, c.rq.path, r.status, c.status, r.body)
			continue
		}
		wantError(t, c.rq.method+" "+c.rq.path, r.body)
	}
}

// TestRegister_CannotClaimAdmin: an isAdmin member sent with the registration, as a form field or
// in JSON, is ignored; the new user is no admin and cannot manage brands.
func TestRegister_CannotClaimAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	viaForm := e.want(e.do(request{method: "POST", path: "/api/user/register",
		form: url.Values{"name": {"Eve"}, "email": {"eve@example.com"}, "password": {"eve-password"}, "isAdmin": {"true"}, "is_admin": {"true"}}}),
		http.StatusCreated)
	viaJSON := e.want(e.do(request{method: "POST", path: "/api/user/register",
		json: map[string]any{"name": "Mallory", "email": "mallory@example.com", "password": "mallory-password", "isAdmin": true}}),
		http.StatusCreated)
	for _, r := range []resp{viaForm, viaJSON} {
		var u struct {
			Token string `json:"token"`
		}
		r.decode(t, &u)
		if e.me(u.Token).IsAdmin {
			t.Errorf("registration made an admin: %s", r.body)
		}
		e.want(e.do(request{method: "POST", path: "/api/brand", token: u.Token, json: map[string]any{"name": "Mine"}}), http.StatusForbidden)
	}
}

// TestBodies_MediaTypeParameters: bodies whose Content-Type carries a charset, as browsers and
// HTTP libraries commonly send them, are read like plain ones.
func TestBodies_MediaTypeParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	form := url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"correct-horse"}}
	e.want(e.do(request{method: "POST", path: "/api/user/register", form: form,
		ctype: "application/x-www-form-urlencoded; charset=UTF-8"}), http.StatusCreated)
	e.want(e.do(request{method: "POST", path: "/api/user/login", ctype: "application/json; charset=utf-8",
		json: map[string]string{"email": "ada@example.com", "password": "correct-horse"}}), http.StatusOK)
	e.want(e.do(request{method: "POST", path: "/api/user/login", ctype: "application/x-www-form-urlencoded;charset=utf-8",
		form: url.Values{"email": {"ada@example.com"}, "password": {"correct-horse"}}}), http.StatusOK)
}
