package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestTokens_DeletedRowRefusedByEveryReplica: two replicas on one database, each caching tokens
// for a minute. A token used on both (so cached on both) whose row is deleted in SQL, as an
// operator revokes it, is refused by both within milliseconds (the time PostgreSQL's notification
// takes); other tokens keep working. (Orders has no logout, and its users, whose ledger rows
// reference them, are never deleted.)
func TestTokens_DeletedRowRefusedByEveryReplica(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	replicas := []*env{newEnvPool(t, pool, time.Hour, throttle.Options{}), newEnvPool(t, pool, time.Hour, throttle.Options{})}
	a := replicas[0]
	signedIn := func(name string) string {
		a.register(name, name+"-password", "Customer")
		tok := a.login(name, name+"-password")
		for _, e := range replicas {
			e.want(e.do("GET", "/authenticated", tok, nil), http.StatusOK)
		}
		return tok
	}
	refused := func(tok, after string) {
		t.Helper()
		start := time.Now()
		for i, e := range replicas {
			for {
				r := e.do("GET", "/authenticated", tok, nil)
				if r.status == http.StatusUnauthorized {
					break
				}
				if r.status != http.StatusOK || time.Since(start) > 2*time.Second {
					t.Fatalf("replica %d answers %d %v after %s, want 401 within 2 s", i, r.status, time.Since(start).Round(time.Millisecond), after)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		t.Logf("both replicas refused the token within %v of %s", time.Since(start).Round(time.Millisecond), after)
	}

	kept := signedIn("kept")
	tok := signedIn("revoked")
	exec(t, pool, "DELETE FROM order_tokens WHERE token_hash = $1", opaquetoken.Hash(tok))
	refused(tok, "its row's deletion")

	for _, e := range replicas {
		e.want(e.do("GET", "/authenticated", kept, nil), http.StatusOK)
	}
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
