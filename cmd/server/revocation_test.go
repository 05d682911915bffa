package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_RevocationsReachBothSurfaces: the server runs one revocation listener for the process
// (one session in pg_stat_activity), both surfaces cache resolved tokens, and a token cached by
// either is refused within milliseconds of its row being deleted in SQL, as an operator revokes it.
func TestServer_RevocationsReachBothSurfaces(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	base, _ := routerServer(t, "-mode", "dev", "-database-url", dbURL)
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var sessions int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name LIKE '% '||$1`, opaquetoken.WatcherApplicationName).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	if sessions != 1 {
		t.Fatalf("%d revocation listener sessions, want 1 for the process", sessions)
	}

	hc := &http.Client{Timeout: 10 * time.Second}
	status := func(path, tok string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	token := func(path string, form url.Values, field string) string {
		t.Helper()
		res, err := hc.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %v", path, res.StatusCode, err)
		}
		tok, _ := body[field].(string)
		return tok
	}
	for _, c := range []struct {
		surface, me, table, column, tok string
	}{
		{"orders", "/authenticated", "order_tokens", "token_hash", token("/oauth/token", url.Values{"grant_type": {"password"},
			"client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}}, "access_token")},
		{"brands", "/api/user/me", "brand_tokens", "token_hash", token("/api/user/login", url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}, "token")},
	} {
		if st := status(c.me, c.tok); st != http.StatusOK {
			t.Fatalf("%s: a fresh token answered %d", c.surface, st)
		}
		// The surface caches it: a change to its row that is not a deletion (here, an expiry moved
		// into the past) goes unseen until the entry ages out; only deletions are revocations.
		if _, err := pool.Exec(context.Background(), "UPDATE "+c.table+" SET expires_at = now() - interval '1 second' WHERE "+c.column+" = $1", opaquetoken.Hash(c.tok)); err != nil {
			t.Fatal(err)
		}
		if st := status(c.me, c.tok); st != http.StatusOK {
			t.Fatalf("%s: the token is not cached (answered %d once its row said expired)", c.surface, st)
		}
		if _, err := pool.Exec(context.Background(), "DELETE FROM "+c.table+" WHERE "+c.column+" = $1", opaquetoken.Hash(c.tok)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for st := status(c.me, c.tok); st != http.StatusUnauthorized; st = status(c.me, c.tok) {
			if time.Since(start) > 2*time.Second {
				t.Fatalf("%s: the deleted token still answers %d after 2 s", c.surface, st)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("%s: refused %v after the DELETE", c.surface, time.Since(start).Round(time.Millisecond))
	}
}
