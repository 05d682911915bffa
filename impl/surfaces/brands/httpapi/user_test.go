package httpapi_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
)

func TestRegister201(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := time.Now().UTC().Add(-time.Second)
	u := e.register("  Ada Lovelace ", "Ada@Example.com", "correct-horse")
	if !hexID.MatchString(u.UnderscoreId) {
		t.Errorf("_id %q is not 24 hex digits", u.UnderscoreId)
	}
	if !b64Token.MatchString(u.Token) {
		t.Errorf("token %q is not 256 bits of base64url", u.Token)
	}
	if u.Name != "Ada Lovelace" || u.Email != "Ada@Example.com" {
		t.Errorf("user = %+v", u)
	}
	if u.Subscriptions == nil || len(u.Subscriptions) != 0 {
		t.Errorf("subscriptions = %v, want []", u.Subscriptions)
	}
	if !isoUTCms.MatchString(u.CreatedAt) {
		t.Errorf("created_at %q is not ISO 8601 UTC with milliseconds", u.CreatedAt)
	}
	if ts, err := time.Parse(time.RFC3339, u.CreatedAt); err != nil || ts.Before(before) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at %q is not now (%v)", u.CreatedAt, err)
	}
	// The register token works at once.
	if me := e.me(u.Token); me.UnderscoreId != u.UnderscoreId || me.CreatedAt != u.CreatedAt || me.IsAdmin {
		t.Errorf("me = %+v, want the registered user %+v", me, u)
	}

	// JSON bodies are accepted too.
	r := e.want(e.do(request{method: "POST", path: "/api/user/register",
		json: map[string]string{"name": "Grace", "email": "grace@example.com", "password": "hopper-1906"}}), http.StatusCreated)
	if !strings.Contains(string(r.body), `"subscriptions":[]`) {
		t.Errorf("new user's subscriptions not an empty array: %s", r.body)
	}
}

func TestRegister409(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register("Ada", "ada@example.com", "correct-horse")
	for _, email := range []string{"ada@example.com", "ADA@example.COM", " ada@example.com "} {
		r := e.want(e.do(request{method: "POST", path: "/api/user/register",
			form: url.Values{"name": {"Other"}, "email": {email}, "password": {"other-password"}}}), http.StatusConflict)
		if c := r.errBody(t).Code; c != "email_taken" {
			t.Errorf("%q: code %q", email, c)
		}
	}
}

func TestRegister400(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"bad email", url.Values{"name": {"A"}, "email": {"not-an-email"}, "password": {"password1"}}, "email"},
		{"display name in email", url.Values{"name": {"A"}, "email": {"Ada <ada@example.com>"}, "password": {"password1"}}, "email"},
		{"short password", url.Values{"name": {"A"}, "email": {"a@example.com"}, "password": {"short"}}, "password"},
		{"long password", url.Values{"name": {"A"}, "email": {"a@example.com"}, "password": {strings.Repeat("p", 129)}}, "password"},
		{"blank name", url.Values{"name": {"   "}, "email": {"a@example.com"}, "password": {"password1"}}, "name"},
		{"long name", url.Values{"name": {strings.Repeat("n", 101)}, "email": {"a@example.com"}, "password": {"password1"}}, "name"},
		{"missing email", url.Values{"name": {"A"}, "password": {"password1"}}, "email"},
	}
	for _, c := range cases {
		r := e.want(e.do(request{method: "POST", path: "/api/user/register", form: c.form}), http.StatusBadRequest)
		body := r.errBody(t)
		if body.Code != "validation_failed" || body.Details == nil || len(*body.Details) == 0 {
			t.Errorf("%s: body %s", c.name, r.body)
			continue
		}
		found := false
		for _, d := range *body.Details {
			found = found || strings.Contains(d.Field, c.field)
		}
		if !found {
			t.Errorf("%s: details %s do not name %q", c.name, r.body, c.field)
		}
	}
	// Neither form nor JSON.
	e.want(e.do(request{method: "POST", path: "/api/user/register"}), http.StatusBadRequest)
	e.want(e.do(request{method: "POST", path: "/api/user/register", json: `{"name":`}), http.StatusBadRequest)
}

func TestLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	tok := e.login("ADA@example.com", "correct-horse")
	if !b64Token.MatchString(tok) || tok == u.Token {
		t.Errorf("login token %q: want a new 256-bit token", tok)
	}
	if e.me(tok).UnderscoreId != u.UnderscoreId {
		t.Error("login token does not authenticate the user")
	}
	// JSON body.
	e.want(e.do(request{method: "POST", path: "/api/user/login",
		json: map[string]string{"email": "ada@example.com", "password": "correct-horse"}}), http.StatusOK)

	// An unknown email and a wrong password get byte-for-byte the same body (request id aside).
	wrong := e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {"ada@example.com"}, "password": {"wrong-horse"}}}), http.StatusUnauthorized).errBody(t)
	unknown := e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {"nobody@example.com"}, "password": {"correct-horse"}}}), http.StatusUnauthorized).errBody(t)
	wrong.RequestId, unknown.RequestId = nil, nil
	if wrong.Code != "invalid_credentials" || wrong.Code != unknown.Code || wrong.Message != unknown.Message {
		t.Errorf("wrong password %+v vs unknown email %+v", wrong, unknown)
	}
	e.want(e.do(request{method: "POST", path: "/api/user/login", form: url.Values{"email": {"ada@example.com"}}}), http.StatusBadRequest)
}

func TestTokens_QueryAndBearer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	r := e.want(e.do(request{method: "GET", path: "/api/user/me", bearer: u.Token}), http.StatusOK)
	var me struct {
		Token string `json:"token"`
	}
	r.decode(t, &me)
	if me.Token != u.Token {
		t.Errorf("me token %q, want the presented one", me.Token)
	}
	second := e.login("ada@example.com", "correct-horse")
	if got := e.me(second).Token; got != second {
		t.Errorf("me returns token %q, want the presented %q", got, second)
	}
	// When both are sent, the query parameter is the one used (docs/brands.md, spec).
	r = e.want(e.do(request{method: "GET", path: "/api/user/me", token: second, bearer: "nonsense"}), http.StatusOK)
	r.decode(t, &me)
	if me.Token != second {
		t.Errorf("me with query and bearer tokens returns %q, want the query's %q", me.Token, second)
	}
	e.want(e.do(request{method: "GET", path: "/api/user/me", token: "nonsense", bearer: second}), http.StatusUnauthorized)
}

func TestTokens401(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	brand := "655e1f2a0000000000000001"
	routes := []request{
		{method: "GET", path: "/api/user/me"},
		{method: "POST", path: "/api/user/logout"},
		{method: "POST", path: "/api/user/reset", form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"new-password"}}},
		{method: "PUT", path: "/api/user/edit", form: url.Values{"name": {"X"}}},
		{method: "POST", path: "/api/subscribe/" + brand},
		{method: "POST", path: "/api/unsubscribe/" + brand},
		{method: "POST", path: "/api/brand", json: map[string]any{"name": "X"}},
		{method: "PATCH", path: "/api/brand/" + brand, json: map[string]any{"name": "X"}},
		{method: "DELETE", path: "/api/brand/" + brand},
	}
	for _, bad := range []struct{ token, bearer string }{{}, {token: "nonsense"}, {bearer: "nonsense"}, {token: u.Token + "x"}, {bearer: strings.Repeat("a", 300)}, {token: strings.Repeat("a", 300)}} {
		for _, rq := range routes {
			rq.token, rq.bearer = bad.token, bad.bearer
			r := e.want(e.do(rq), http.StatusUnauthorized)
			if r.errBody(t).Code != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %+v: %s", rq.method, rq.path, bad, r.body)
			}
		}
	}
}

// TestTokens401_BeforeValidation: a route that needs a user answers a request without any token
// 401, even when the body is missing or malformed too; public routes stay open.
func TestTokens401_BeforeValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rq := range []request{
		{method: "POST", path: "/api/user/reset"},
		{method: "POST", path: "/api/user/reset", json: `{"currentPassword":`},
		{method: "PUT", path: "/api/user/edit", form: url.Values{"email": {strings.Repeat("x", 300)}}},
		{method: "POST", path: "/api/brand", json: map[string]any{"name": "", "unknown": 1}},
		{method: "PATCH", path: "/api/brand/" + unknownID, json: map[string]any{}},
		{method: "POST", path: "/api/brand", ctype: "text/plain", json: "hello"},
	} {
		r := e.want(e.do(rq), http.StatusUnauthorized)
		if r.errBody(t).Code != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: %s", rq.method, rq.path, r.body)
		}
	}
	// With a token present the body is validated as usual.
	u := e.register("Ada", "ada@example.com", "correct-horse")
	e.want(e.do(request{method: "POST", path: "/api/user/reset", token: u.Token}), http.StatusBadRequest)
	// Public routes need no token.
	e.want(e.do(request{method: "GET", path: "/api/brand/list"}), http.StatusOK)
	e.want(e.do(request{method: "GET", path: "/api/brand/" + unknownID}), http.StatusNotFound)
	e.want(e.do(request{method: "POST", path: "/api/user/login"}), http.StatusBadRequest)
}

func TestTokens_StoredAsHashOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	var n int
	sum := sha256.Sum256([]byte(u.Token))
	if err := e.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM brand_tokens WHERE token_hash = $1`, sum[:]).Scan(&n); err != nil || n != 1 {
		t.Fatalf("token hash rows = %d, %v", n, err)
	}
	var dump string
	if err := e.pool.QueryRow(context.Background(),
		`SELECT coalesce(string_agg(t::text, ' '), '') || (SELECT string_agg(u::text, ' ') FROM brand_users u) FROM brand_tokens t`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, u.Token) || strings.Contains(dump, "correct-horse") {
		t.Error("the database holds the token or the password in clear")
	}
	if !strings.Contains(dump, "$argon2id$") {
		t.Error("the password is not stored as an argon2id hash")
	}
}

// TestLogout: logging out resets the user token (brands-api.md, authentication rule 3): every
// token of the user stops working, not only the one presented, while until then each login keeps
// its own token beside the others (several devices signed in at once). Other users are untouched.
func TestLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	phone := e.login("ada@example.com", "correct-horse")
	laptop := e.login("ada@example.com", "correct-horse")
	stranger := e.register("Bob", "bob@example.com", "correct-horse").Token
	for _, tok := range []string{u.Token, phone, laptop} {
		e.me(tok) // several devices signed in at once
	}
	r := e.want(e.do(request{method: "POST", path: "/api/user/logout", token: phone}), http.StatusOK)
	if m := r.message(t); m != "You have successfully logged out." {
		t.Errorf("message %q", m)
	}
	// Every token of the user stops working at once; logging out again is a 401.
	for _, tok := range []string{u.Token, phone, laptop} {
		e.want(e.do(request{method: "GET", path: "/api/user/me", token: tok}), http.StatusUnauthorized)
	}
	e.want(e.do(request{method: "POST", path: "/api/user/logout", token: laptop}), http.StatusUnauthorized)
	e.me(stranger)
	// A new login works, and Bearer works for logout too.
	again := e.login("ada@example.com", "correct-horse")
	e.want(e.do(request{method: "POST", path: "/api/user/logout", bearer: again}), http.StatusOK)
	e.want(e.do(request{method: "GET", path: "/api/user/me", bearer: again}), http.StatusUnauthorized)
	e.me(stranger)
}

func TestReset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	other := e.login("ada@example.com", "correct-horse")

	r := e.want(e.do(request{method: "POST", path: "/api/user/reset", token: u.Token,
		form: url.Values{"currentPassword": {"wrong-horse"}, "newPassword": {"new-password"}}}), http.StatusForbidden)
	if c := r.errBody(t).Code; c != "wrong_password" {
		t.Errorf("code %q", c)
	}
	e.me(other) // a refused change revokes nothing
	r = e.want(e.do(request{method: "POST", path: "/api/user/reset", token: u.Token,
		form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"short"}}}), http.StatusBadRequest)
	if !strings.Contains(string(r.body), "newPassword") {
		t.Errorf("details do not name newPassword: %s", r.body)
	}

	r = e.want(e.do(request{method: "POST", path: "/api/user/reset", token: u.Token,
		form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"new-password"}}}), http.StatusOK)
	if m := r.message(t); m != "Password successfully changed" {
		t.Errorf("message %q", m)
	}
	e.me(u.Token) // the presented token stays valid
	e.want(e.do(request{method: "GET", path: "/api/user/me", token: other}), http.StatusUnauthorized)
	e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {"ada@example.com"}, "password": {"correct-horse"}}}), http.StatusUnauthorized)
	e.login("ada@example.com", "new-password")

	// JSON body.
	e.want(e.do(request{method: "POST", path: "/api/user/reset", bearer: u.Token,
		json: map[string]string{"currentPassword": "new-password", "newPassword": "newer-password"}}), http.StatusOK)
	e.login("ada@example.com", "newer-password")
}

func TestEdit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	e.register("Grace", "grace@example.com", "hopper-1906")

	r := e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token,
		form: url.Values{"name": {"Ada King"}}}), http.StatusOK)
	if m := r.message(t); m != "Profile successfully changed." {
		t.Errorf("message %q", m)
	}
	if me := e.me(u.Token); me.Name != "Ada King" || me.Email != "ada@example.com" {
		t.Errorf("after name change: %+v", me)
	}
	e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token,
		json: map[string]string{"email": "ada.king@example.com", "name": ""}}), http.StatusOK)
	if me := e.me(u.Token); me.Name != "Ada King" || me.Email != "ada.king@example.com" {
		t.Errorf("after email change: %+v", me)
	}
	e.login("ada.king@example.com", "correct-horse")
	// Changing the case of one's own email is fine; taking another's is not.
	e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token, form: url.Values{"email": {"Ada.King@example.com"}}}), http.StatusOK)
	r = e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token, form: url.Values{"email": {"GRACE@example.com"}}}), http.StatusConflict)
	if c := r.errBody(t).Code; c != "email_taken" {
		t.Errorf("code %q", c)
	}
	e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token, form: url.Values{"email": {"nope"}}}), http.StatusBadRequest)
	e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token, form: url.Values{"name": {""}}}), http.StatusBadRequest)
	e.want(e.do(request{method: "PUT", path: "/api/user/edit", token: u.Token, json: map[string]string{}}), http.StatusBadRequest)
}

func TestRegister413(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.want(e.do(request{method: "POST", path: "/api/user/register",
		form: url.Values{"name": {"A"}, "email": {"a@example.com"}, "password": {strings.Repeat("p", 2<<20)}}}), http.StatusRequestEntityTooLarge)
	if c := r.errBody(t).Code; c != "request_too_large" {
		t.Errorf("code %q", c)
	}
}

// TestRegister_ConcurrentSameEmail: of many simultaneous registrations of one address (in varying
// case), exactly one succeeds and the others get 409.
func TestRegister_ConcurrentSameEmail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 12
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			email := "same@example.com"
			if i%2 == 1 {
				email = "SAME@example.com"
			}
			statuses <- e.do(request{method: "POST", path: "/api/user/register",
				form: url.Values{"name": {"Same"}, "email": {email}, "password": {"password-123"}}}).status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
		t.Fatalf("statuses %v, want one 201 and %d 409", count, n-1)
	}
}

// TestReset_Concurrent: of simultaneous password changes that all quote the same current password,
// exactly one succeeds; the others see the changed password and get 403.
func TestReset_Concurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.register("Ada", "ada@example.com", "correct-horse")
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.do(request{method: "POST", path: "/api/user/reset", token: u.Token,
				form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"new-password-" + strconv.Itoa(i)}}}).status
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusForbidden] != n-1 {
		t.Fatalf("statuses %v, want one 200 and %d 403", count, n-1)
	}
}

// TestTokens_Expire: a token stops working once its lifetime has passed (judged by the injected
// clock), for every route; logging in again gives a fresh one; the sweep removes expired rows.
func TestTokens_Expire(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	e := newEnvWith(t, httpapi.Options{TokenTTL: time.Hour, Now: now})
	u := e.register("Ada", "ada@example.com", "correct-horse")
	offset.Store(int64(59 * time.Minute))
	e.me(u.Token)
	offset.Store(int64(61 * time.Minute))
	e.want(e.do(request{method: "GET", path: "/api/user/me", token: u.Token}), http.StatusUnauthorized)
	e.want(e.do(request{method: "POST", path: "/api/subscribe/" + unknownID, bearer: u.Token}), http.StatusUnauthorized)
	e.want(e.do(request{method: "POST", path: "/api/user/logout", token: u.Token}), http.StatusUnauthorized)
	fresh := e.login("ada@example.com", "correct-horse")
	e.me(fresh)

	n, err := e.api.Tokens().Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("sweep removed %d rows (%v), want the one expired token", n, err)
	}
	e.me(fresh)
}
