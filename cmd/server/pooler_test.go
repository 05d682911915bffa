package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_ReplicasBehindTransactionPooler: three servers started at the same instant on an
// empty database, with DATABASE_URL through PgBouncer in transaction mode (Debian's, its default
// settings) and DATABASE_DIRECT_URL straight to PostgreSQL, all come up and serve reads and writes
// through the pooler. Before, two of three exited at start (pgx's named prepared statements met on
// another client's server connection), and with exec mode the others waited forever for the
// start-up lock a pooled server connection kept.
func TestServer_ReplicasBehindTransactionPooler(t *testing.T) {
	t.Parallel()
	direct := dbtest.NewEmptyURL(t)
	pooled := dbtest.Bouncer(t, direct)
	const replicas = 3
	bases := make(chan string, replicas)
	for range replicas {
		go func() {
			base, _ := testServer(t, "-mode", "dev", "-database-url", pooled, "-database-direct-url", direct)
			bases <- base
		}()
	}
	// A request that hangs (a server connection the pooler never hands back) fails the test in
	// bounded time instead of holding the whole run until its timeout.
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range replicas {
		base := <-bases
		if base == "" {
			t.FailNow() // testServer failed the test
		}
		for j := range 5 {
			if status, _, body := get(t, base+"/api/brand/list"); status != http.StatusOK {
				t.Fatalf("replica %d: brand list: %d %s", i, status, body)
			}
			body := fmt.Sprintf(`{"name":"U","email":"u%d-%d@example.com","password":"a-long-password"}`, i, j)
			resp, err := client.Post(base+"/api/user/register", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var reg struct{ Token string }
			_ = json.NewDecoder(resp.Body).Decode(&reg)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("replica %d: register: %d", i, resp.StatusCode)
			}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, base+"/api/user/me", nil)
			req.Header.Set("Authorization", "Bearer "+reg.Token)
			me, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			me.Body.Close()
			if me.StatusCode != http.StatusOK {
				t.Fatalf("replica %d: the new user's profile: %d", i, me.StatusCode)
			}
		}
	}
}
