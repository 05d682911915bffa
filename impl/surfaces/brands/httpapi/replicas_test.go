package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
)

// refusedWithin waits until e (one replica) refuses tok, polling for at most 2 s: the time a
// revocation may take to reach a replica's cache (PostgreSQL's notification of the deleted row).
func refusedWithin(t *testing.T, e *env, tok, after string) {
	t.Helper()
	start := time.Now()
	for {
		r := e.do(request{method: "GET", path: "/api/user/me", token: tok})
		if r.status == http.StatusUnauthorized {
			t.Logf("refused %v after %s", time.Since(start).Round(time.Millisecond), after)
			return
		}
		if r.status != http.StatusOK || time.Since(start) > 2*time.Second {
			t.Fatalf("the other replica answers %d %v after %s, want 401 within 2 s", r.status, time.Since(start).Round(time.Millisecond), after)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTokens_RevokedOnEveryReplica: two replicas on one database, each caching tokens. A token
// used on both (so cached on both) and revoked through one, by a logout, a password change or
// the user's deletion, is refused by the other too, in milliseconds, and at once by the one that
// revoked it; the tokens a revocation spares (the one a password change was made with, another
// user's) keep working on both.
func TestTokens_RevokedOnEveryReplica(t *testing.T) {
	t.Parallel()
	a := newEnv(t)
	b := a.twin()
	signedIn := func(email string) (keep, tok string) {
		u := a.register("Ada", email, "correct-horse")
		tok = a.login(email, "correct-horse")
		a.me(tok)
		a.me(u.Token)
		b.me(tok)
		b.me(u.Token)
		return u.Token, tok
	}

	t.Run("logout", func(t *testing.T) {
		_, other := signedIn("bystander@example.com")
		keep, tok := signedIn("logout@example.com")
		a.want(a.do(request{method: "POST", path: "/api/user/logout", token: tok}), http.StatusOK)
		a.want(a.do(request{method: "GET", path: "/api/user/me", token: tok}), http.StatusUnauthorized)
		// A logout ends every token of the user (the seed's "resets the user token"), on both.
		a.want(a.do(request{method: "GET", path: "/api/user/me", token: keep}), http.StatusUnauthorized)
		refusedWithin(t, b, tok, "the logout")
		refusedWithin(t, b, keep, "the logout")
		b.me(other)
	})
	t.Run("password change", func(t *testing.T) {
		keep, tok := signedIn("reset@example.com")
		a.want(a.do(request{method: "POST", path: "/api/user/reset", token: keep,
			form: url.Values{"currentPassword": {"correct-horse"}, "newPassword": {"new-password"}}}), http.StatusOK)
		a.want(a.do(request{method: "GET", path: "/api/user/me", token: tok}), http.StatusUnauthorized)
		refusedWithin(t, b, tok, "the password change")
		a.me(keep)
		b.me(keep)
	})
	t.Run("user deleted", func(t *testing.T) {
		keep, tok := signedIn("deleted@example.com")
		if _, err := a.pool.Exec(context.Background(), "DELETE FROM brand_users WHERE email = 'deleted@example.com'"); err != nil {
			t.Fatal(err)
		}
		// GET /api/user/me reads the user's row too, so it is refused whatever the cache holds:
		// the caches are asked directly.
		for _, e := range []*env{a, b} {
			for _, tk := range []string{keep, tok} {
				start := time.Now()
				for {
					_, err := e.api.Tokens().Resolve(context.Background(), tk)
					if errors.Is(err, opaquetoken.ErrInvalid) {
						break
					}
					if time.Since(start) > 2*time.Second {
						t.Fatalf("a replica still resolves a deleted user's token after 2 s: %v", err)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
	})
}
