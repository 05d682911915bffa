package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// deepOrders is how many waiting orders TestHostileOrders_DeepPagesStarveNoOne seeds: enough that
// an unbounded deep page reads for tens of milliseconds, few enough to seed in seconds.
const deepOrders = 100_000

// fromAddr is an HTTP client whose connections leave from the loopback address ip (127.0.0.N),
// at most conns at once.
func fromAddr(ip string, conns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns,
	}}
}

// TestHostileOrders_DeepPagesStarveNoOne replays issue 22 item 9 against the binary: over 100,000
// waiting orders one performer (from 127.0.0.2) requests GET /orders?page=9999&size=100&sort=price,desc
// on 16 connections, and the deepest page the server still serves (page 100 of 100) on 16 more,
// while a bystander performer (from 127.0.0.3) reads page 0 one request after another. The
// bystander's median stays under 100 ms (on a quiet machine: patience.Bound); the far page is refused at once (400, page too_large,
// limit 100) and costs no query.
//
// It measures time, so it does not run in parallel: Go runs it while this package's parallel tests
// wait, and the median is the server's, not the other suites' load.
func TestHostileOrders_DeepPagesStarveNoOne(t *testing.T) {
	s := startServer(t, orders)
	if s.dbURL == "" {
		t.Skip("needs the server's database to seed its orders")
	}
	ctx := context.Background()
	e := newOrdersEnvAt(t, s.URL) // timing is the server's: no Prism proxy in between
	hammer := e.signUp("deep-hammer", ordersapi.Performer)
	bystander := e.signUp("bystander", ordersapi.Performer)

	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	seeded := time.Now()
	// One statement: the orders and their list counters (a customer with no money: these orders
	// are only read here).
	if _, err := pool.Exec(ctx, `
		WITH c AS (
			INSERT INTO order_users (username, password_hash, user_type, balance) VALUES ('deep-seed', 'x', 'Customer', 0) RETURNING id
		), o AS (
			INSERT INTO orders (customer_id, description, price)
			SELECT c.id, 'seeded order ' || g, 1 + (g * 7919) % 100000000 FROM c, generate_series(1, $1) AS g
			RETURNING customer_id
		)
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT x.scope, x.owner_id, 0, count(*) FROM o, LATERAL (VALUES ('waiting', 0::bigint), ('customer', o.customer_id)) AS x(scope, owner_id)
		GROUP BY x.scope, x.owner_id
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`, deepOrders); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE orders"); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d waiting orders in %s", deepOrders, time.Since(seeded).Round(time.Millisecond))

	get := func(c *http.Client, token, query string) (int, []byte, time.Duration) {
		req, _ := http.NewRequest("GET", s.URL+"/orders?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		res, err := c.Do(req)
		if err != nil {
			return 0, nil, time.Since(start)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, body, time.Since(start)
	}
	hammerToken, bystanderToken := tokenOf(t, e, hammer), tokenOf(t, e, bystander)

	// The far page is refused before any query, naming the deepest page of its size.
	status, body, _ := get(http.DefaultClient, hammerToken, "page=9999&size=100&sort=price,desc")
	var refused ordersapi.Error
	if status != http.StatusBadRequest || json.Unmarshal(body, &refused) != nil || refused.Details == nil ||
		len(*refused.Details) != 1 || (*refused.Details)[0].Field != "page" || (*refused.Details)[0].Code != "too_large" ||
		(*refused.Details)[0].Limit == nil || string(*(*refused.Details)[0].Limit) != "100" {
		t.Fatalf("page 9999 of 100: %d %s; want 400 with page too_large, limit 100", status, body)
	}

	// What a page costs alone, for docs/scaling.md: page 0 and the deepest page served.
	alone := func(query string) time.Duration {
		var ds []time.Duration
		for range 9 {
			st, body, d := get(http.DefaultClient, bystanderToken, query)
			if st != http.StatusOK {
				t.Fatalf("%s: %d %s", query, st, body)
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return medianOf(ds)
	}
	t.Logf("alone: page 0 of 20 median %s, page 100 of 100 by price desc median %s",
		alone("page=0&size=20").Round(time.Microsecond), alone("page=100&size=100&sort=price,desc").Round(time.Microsecond))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var far, deep, failed atomic.Int64
	var deepTimes []time.Duration
	var mu sync.Mutex
	hc := fromAddr("127.0.0.2", 32)
	for i := range 32 {
		query, count := "page=9999&size=100&sort=price,desc", &far
		if i%2 == 1 {
			query, count = "page=100&size=100&sort=price,desc", &deep
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, _, d := get(hc, hammerToken, query)
				switch {
				case st == http.StatusOK && count == &deep:
					mu.Lock()
					deepTimes = append(deepTimes, d)
					mu.Unlock()
				case st == http.StatusBadRequest && count == &far:
				default:
					failed.Add(1)
				}
				count.Add(1)
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the hammer is in full swing
	bc := fromAddr("127.0.0.3", 1)
	var times []time.Duration
	for range 25 {
		st, body, d := get(bc, bystanderToken, "page=0&size=20")
		if st != http.StatusOK {
			close(stop)
			wg.Wait()
			t.Fatalf("bystander's page 0: %d %s", st, body)
		}
		times = append(times, d)
	}
	close(stop)
	wg.Wait()
	slices.Sort(times)
	slices.Sort(deepTimes)
	median := times[len(times)/2]
	t.Logf("bystander page 0: median %s, max %s; hammer: %d far-page refusals, %d deepest pages (median %s); %d other answers",
		median.Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond), far.Load(), deep.Load(),
		medianOf(deepTimes).Round(time.Microsecond), failed.Load())
	if failed.Load() != 0 {
		t.Errorf("%d hammer requests got neither 200 (deepest page) nor 400 (far page)", failed.Load())
	}
	// 100 ms on a quiet machine; on one shared with other jobs the bound stretches with the load
	// (patience.Bound), while a starved bystander waits as long as the deepest pages take (seconds).
	if bound := patience.Bound(100 * time.Millisecond); median >= bound {
		t.Fatalf("bystander's page-0 median %s under the deep-page hammer, want < %v (times %v)", median, bound, times)
	}
}

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)/2]
}

// tokenOf logs u in again and returns the bare access token, for clients outside the generated one.
func tokenOf(t *testing.T, e *ordersEnv, u ordersUser) string {
	t.Helper()
	tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, u.Username, u.Username+"-password")
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}
