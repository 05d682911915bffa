package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// BenchmarkSubscribeHotBrand: POST /api/subscribe/{id} from 64 concurrent clients, every one a
// different user subscribing to the same brand, over real HTTP, against a baseline handler served
// the same way that runs one INSERT of a (user, brand) row into a table of its own (no token, no
// brand check, no count). Rounds of both sides alternate in the same run. The server runs as in
// production, with a token revocation Watcher, so resolved tokens are cached; and the users are
// signed in, as in a flood of subscribes from users with open sessions: each token has been used
// once (GET /api/user/me, untimed) before its subscribe, which so finds it cached. x-baseline is
// our throughput over the baseline's; the target is at least 0.5. x-baseline-first-use (reported,
// not gated) is the same with tokens never used before, whose subscribe first resolves the token
// in the database. The benchmark fails if any request failed or the brand's subscriberCount is
// not exact afterwards.
func BenchmarkSubscribeHotBrand(b *testing.B) {
	const clients = 64
	pool := dbtest.New(b)
	ctx := context.Background()
	seedBrands(b, pool, 1)
	var brand string
	if err := pool.QueryRow(ctx, `SELECT id FROM brands`).Scan(&brand); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE bench_subscriptions (user_id text NOT NULL, brand_id text NOT NULL,
		created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (user_id, brand_id))`); err != nil {
		b.Fatal(err)
	}
	ours := benchServer(b, pool)
	base := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := pool.Exec(r.Context(), `INSERT INTO bench_subscriptions (user_id, brand_id) VALUES ($1, $2)`,
			r.URL.Query().Get("user"), brand)
		if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"message":"Successfully Subscribed"}`+"\n")
	}))
	defer base.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}

	// users makes n users with access tokens straight in SQL (registration would spend its time
	// hashing passwords), each token being its user's name padded to a token's length.
	made := 0
	users := func(n int) []string {
		rows, err := pool.Query(ctx, `
			WITH u AS (
				INSERT INTO brand_users (email, name, password_hash)
				SELECT 'sub' || g || '@bench.test', 'sub' || g, 'x' FROM generate_series($1 + 1, $1 + $2) AS g
				RETURNING id, name
			), t AS (
				INSERT INTO brand_tokens (token_hash, user_id, expires_at)
				SELECT sha256(convert_to(rpad(name, 43, 'A'), 'UTF8')), id, now() + interval '1 day' FROM u
			)
			SELECT id, name FROM u`, made, n)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var toks []string
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				b.Fatal(err)
			}
			toks = append(toks, (name + strings.Repeat("A", 43))[:43]+"|"+id)
		}
		made += n
		return toks
	}
	var failures atomic.Int64
	// runAs sends one request per token from the clients, method to url, and returns the time taken.
	runAs := func(method string, toks []string, url func(tok, id string) string) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range clients {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(toks) {
						return
					}
					tok, id, _ := strings.Cut(toks[i], "|")
					req, _ := http.NewRequest(method, url(tok, id), nil)
					res, err := client.Do(req)
					if err != nil || res.StatusCode != http.StatusOK {
						failures.Add(1)
					}
					if res != nil {
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	run := func(toks []string, url func(tok, id string) string) time.Duration {
		return runAs(http.MethodPost, toks, url)
	}
	oursURL := func(tok, _ string) string {
		return fmt.Sprintf("%s/api/subscribe/%s?access_token=%s", ours, brand, tok)
	}
	baseURL := func(_, id string) string { return fmt.Sprintf("%s/?user=%s", base.URL, id) }
	signIn := func(toks []string) { // untimed: each token used once, and so cached
		runAs(http.MethodGet, toks, func(tok, _ string) string { return ours + "/api/user/me?access_token=" + tok })
	}
	b.ResetTimer()
	b.StopTimer()
	warm := users(256)
	signIn(warm)
	run(warm, oursURL) // untimed warm-up: connections, prepared statements
	run(warm, baseURL)
	subscribed := len(warm)
	var tOurs, tBase, tFirst time.Duration
	// At least 4,096 subscriptions a side, in rounds of 256 that alternate which side goes first, so
	// a neighbour's burst on the shared machine lands on both sides alike.
	total := max(b.N, 4096)
	for done, r := 0, 0; done < total; r++ {
		k := min(256, total-done)
		toks, fresh := users(k), users(k)
		signIn(toks)
		if r%2 == 0 {
			tBase += run(toks, baseURL)
		}
		b.StartTimer()
		tOurs += run(toks, oursURL)
		b.StopTimer()
		if r%2 == 1 {
			tBase += run(toks, baseURL)
		}
		tFirst += run(fresh, oursURL)
		done += k
		subscribed += 2 * k
	}
	if failures.Load() != 0 {
		b.Fatalf("%d requests failed", failures.Load())
	}
	res, err := http.Get(fmt.Sprintf("%s/api/brand/%s", ours, brand))
	if err != nil {
		b.Fatal(err)
	}
	var got struct {
		SubscriberCount int `json:"subscriberCount"`
	}
	err = json.NewDecoder(res.Body).Decode(&got)
	res.Body.Close()
	if err != nil || got.SubscriberCount != subscribed {
		b.Fatalf("subscriberCount %d after %d subscriptions (%v)", got.SubscriberCount, subscribed, err)
	}
	oursRate, baseRate := float64(total)/tOurs.Seconds(), float64(total)/tBase.Seconds()
	b.ReportMetric(oursRate, "subscribes/s")
	b.ReportMetric(baseRate, "baseline-inserts/s")
	b.ReportMetric(oursRate/baseRate, "x-baseline")
	b.ReportMetric(float64(total)/tFirst.Seconds()/baseRate, "x-baseline-first-use")
}
