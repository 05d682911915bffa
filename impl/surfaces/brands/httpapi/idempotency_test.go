package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"testing"
)

// TestIdempotency_RegisterAndSubscribeOncePerKey: a repeated registration with its key gets the
// first answer (the same user and token) and makes one user, where without the key it was refused
// as a taken email; a repeated subscription with its key gets the first answer, replayed, and
// counts one subscriber.
func TestIdempotency_RegisterAndSubscribeOncePerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	form := url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"correct-horse"}}
	first := e.want(e.do(request{method: "POST", path: "/api/user/register", form: form, idemKey: "reg-ada"}), http.StatusCreated)
	again := e.want(e.do(request{method: "POST", path: "/api/user/register", form: form, idemKey: "reg-ada"}), http.StatusCreated)
	if !bytes.Equal(first.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the repeated registration answered %s, want the first answer %s, replayed", again.body, first.body)
	}
	var users int
	if err := e.pool.QueryRow(context.Background(), "SELECT count(*) FROM brand_users WHERE email = 'ada@example.com'").Scan(&users); err != nil || users != 1 {
		t.Fatalf("%d users ada (%v)", users, err)
	}

	b := e.createBrand(e.admin(), map[string]any{"name": "Fabrikam", "availability": true})
	u := e.register("Bea", "bea@example.com", "correct-horse")
	sub := request{method: "POST", path: "/api/subscribe/" + b.UnderscoreId, token: u.Token, idemKey: "sub-fabrikam"}
	s1 := e.want(e.do(sub), http.StatusOK)
	s2 := e.want(e.do(sub), http.StatusOK)
	if !bytes.Equal(s1.body, s2.body) || s2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the repeated subscription answered %s, want the first answer %s, replayed", s2.body, s1.body)
	}
	if n := e.brand(b.UnderscoreId).SubscriberCount; n != 1 {
		t.Fatalf("%d subscribers after a repeated subscription, want 1", n)
	}
}

// TestIdempotency_SubscribeKeyIsTheUsers: a subscription retried with the user's second token
// (from a second login; the first by query, the second by header) gets the first answer; another
// user's same key is another key.
func TestIdempotency_SubscribeKeyIsTheUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.createBrand(e.admin(), map[string]any{"name": "Fabrikam", "availability": true})
	u := e.register("Bea", "bea@example.com", "correct-horse")
	second := e.login("bea@example.com", "correct-horse")
	first := e.want(e.do(request{method: "POST", path: "/api/subscribe/" + b.UnderscoreId, token: u.Token, idemKey: "sub"}), http.StatusOK)
	again := e.want(e.do(request{method: "POST", path: "/api/subscribe/" + b.UnderscoreId, bearer: second, idemKey: "sub"}), http.StatusOK)
	if !bytes.Equal(first.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry with the second token answered %s, want the first answer %s, replayed", again.body, first.body)
	}
	other := e.register("Cy", "cy@example.com", "correct-horse")
	theirs := e.want(e.do(request{method: "POST", path: "/api/subscribe/" + b.UnderscoreId, token: other.Token, idemKey: "sub"}), http.StatusOK)
	if theirs.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("another user's same key replayed the first user's answer")
	}
	if n := e.brand(b.UnderscoreId).SubscriberCount; n != 2 {
		t.Fatalf("%d subscribers, want 2", n)
	}
}

// TestIdempotency_DeleteOncePerKey: a brand's deletion repeated with its key gets the first answer,
// replayed, where without the key it is 404 (the brand is gone); the key with another brand is
// refused with 422; a refused deletion (an unknown brand) keeps nothing, so its key then deletes.
func TestIdempotency_DeleteOncePerKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.admin()
	b := e.createBrand(admin, map[string]any{"name": "Velvet Records", "availability": true})
	del := request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: admin, idemKey: "delete-velvet"}
	first := e.want(e.do(del), http.StatusOK)
	again := e.want(e.do(del), http.StatusOK)
	if !bytes.Equal(first.body, again.body) || first.header.Get("Idempotent-Replayed") != "" || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the repeated deletion answered %s (replayed %q), want the first answer %s, replayed", again.body, again.header.Get("Idempotent-Replayed"), first.body)
	}
	e.want(e.do(request{method: "DELETE", path: del.path, token: admin}), http.StatusNotFound)

	other := e.createBrand(admin, map[string]any{"name": "Fabrikam", "availability": true})
	e.want(e.do(request{method: "DELETE", path: "/api/brand/" + other.UnderscoreId, token: admin, idemKey: "delete-velvet"}), http.StatusUnprocessableEntity)
	unknown := request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: admin, idemKey: "delete-fabrikam"}
	e.want(e.do(unknown), http.StatusNotFound)
	// The refusal kept nothing, so the key is not yet bound to a request: it deletes another brand.
	e.want(e.do(request{method: "DELETE", path: "/api/brand/" + other.UnderscoreId, token: admin, idemKey: "delete-fabrikam"}), http.StatusOK)
}
