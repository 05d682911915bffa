// Command benchcurves measures how the orders API's costs move as its data grows and as clients
// are added (`make bench-curves`). Against a running server and its database it seeds waiting
// orders (generate_series, straight into the tables with the list counters they would have moved)
// up to each size in turn, and at each size prints the page time of GET /orders and GET
// /users/{id}/orders (first and a deep page) and the throughput of POST /orders and PATCH
// /orders/{id}/accept; then, at the largest size, the throughput of each at 1, 8, 64 and 256
// concurrent clients, with the server's resident memory beside every figure.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pairs is how many customer/performer pairs the fixtures hold: one per client at the widest run.
const pairs = 256

type bench struct {
	url    string
	pool   *pgxpool.Pool
	client *http.Client
	pid    int
	dur    time.Duration
	seedID int64 // the customer owning the seeded orders
	// tokens of the seed customer, a performer (for GET /orders) and each pair's customer
	seedTok, perfTok string
	custTok          []string
	custID, perfID   []int64
	next             []atomic.Int64 // per pair: index of the next READY order to accept
	ready            [][]int64      // per pair: READY orders awaiting acceptance
	// the first customer of the ledger curve's year of orders (ledger.go) and its token
	bulkID  int64
	bulkTok string
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "base URL of the running server")
	dbURL := flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL of the server's database")
	sizesFlag := flag.String("sizes", "10000,100000,1000000,10000000", "order counts to seed, ascending")
	clientsFlag := flag.String("clients", "1,8,64,256", "client counts of the concurrency sweep")
	dur := flag.Duration("duration", 3*time.Second, "length of each throughput run")
	pid := flag.Int("server-pid", 0, "the server's process id, to report its resident memory (0: not reported)")
	ledgerFlag := flag.String("ledger-sizes", "", "ledger row counts of the ledger curve, ascending (empty: no ledger curve)")
	flag.Parse()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	b := &bench{url: strings.TrimRight(*url, "/"), pool: pool, pid: *pid, dur: *dur,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: pairs, MaxConnsPerHost: pairs}}}
	if err := b.fixtures(ctx); err != nil {
		log.Fatal(err)
	}
	sizes, clients := ints(*sizesFlag), ints(*clientsFlag)
	fmt.Printf("%-10s %-9s %11s %11s %11s %11s %10s %10s %9s\n", "orders", "seed", "GET /orders", "page 500",
		"GET own", "own p500", "creates/s", "accepts/s", "RSS MiB")
	for _, n := range sizes {
		start := time.Now()
		if err := b.seed(ctx, n); err != nil {
			log.Fatal(err)
		}
		seeded := time.Since(start)
		list := b.pageTime("/orders?page=0&size=20", b.perfTok)
		deep := b.pageTime("/orders?page=500&size=20", b.perfTok)
		own := b.pageTime(fmt.Sprintf("/users/%d/orders?page=0&size=20", b.seedID), b.seedTok)
		ownDeep := b.pageTime(fmt.Sprintf("/users/%d/orders?page=500&size=20", b.seedID), b.seedTok)
		creates := b.creates(64)
		accepts, err := b.accepts(ctx, 64)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-10d %-9s %11s %11s %11s %11s %10.0f %10.0f %9s\n", n, seeded.Round(time.Second), ms(list), ms(deep),
			ms(own), ms(ownDeep), creates, accepts, b.rss())
	}
	fmt.Printf("\nconcurrency sweep at %d orders (%v per run)\n", sizes[len(sizes)-1], b.dur)
	fmt.Printf("%-8s %12s %10s %10s %9s\n", "clients", "GET /orders/s", "creates/s", "accepts/s", "RSS MiB")
	for _, c := range clients {
		reads := b.load(c, func(int) bool { return b.get("/orders?page=0&size=20", b.perfTok) })
		creates := b.creates(c)
		accepts, err := b.accepts(ctx, c)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-8d %12.0f %10.0f %10.0f %9s\n", c, reads, creates, accepts, b.rss())
	}
	if *ledgerFlag != "" {
		b.ledgerCurve(ctx, ints(*ledgerFlag))
	}
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			log.Fatalf("bad number %q", f)
		}
		out = append(out, n)
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// token is a well-formed access token (43 base64url characters) made up for a fixture user; its
// SHA-256 is stored as the server would store an issued one.
func token(name string) string { return (name + strings.Repeat("A", 43))[:43] }

// fixtures inserts the seed customer, a performer and the pairs, each with a ledger grant (so the
// money invariant holds) and a token valid for a day.
func (b *bench) fixtures(ctx context.Context) error {
	rows, err := b.pool.Query(ctx, `
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT name, 'x', kind, 1000000000 FROM (
				SELECT 'curve-seed' AS name, 'Customer' AS kind, 0 AS i UNION ALL SELECT 'curve-perf', 'Performer', 0
				UNION ALL SELECT 'curve-c' || g, 'Customer', g FROM generate_series(1, $1) AS g
				UNION ALL SELECT 'curve-p' || g, 'Performer', g FROM generate_series(1, $1) AS g) AS f
			RETURNING id, username, balance
		), l AS (
			INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', balance FROM u
		), t AS (
			INSERT INTO order_tokens (token_hash, user_id, expires_at)
			SELECT sha256(convert_to(rpad(replace(username, '-', '_'), 43, 'A'), 'UTF8')), id, now() + interval '1 day' FROM u
		)
		SELECT id, username FROM u`, pairs)
	if err != nil {
		return err
	}
	defer rows.Close()
	b.custTok, b.custID, b.perfID = make([]string, pairs), make([]int64, pairs), make([]int64, pairs)
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		tok := token(strings.ReplaceAll(name, "-", "_"))
		switch {
		case name == "curve-seed":
			b.seedID, b.seedTok = id, tok
		case name == "curve-perf":
			b.perfTok = tok
		case strings.HasPrefix(name, "curve-c"):
			i, _ := strconv.Atoi(name[len("curve-c"):])
			b.custID[i-1], b.custTok[i-1] = id, tok
		default:
			i, _ := strconv.Atoi(name[len("curve-p"):])
			b.perfID[i-1] = id
		}
	}
	return rows.Err()
}

// seed tops the seed customer's waiting orders up to n, with the list counters they would have
// moved, and refreshes the planner's statistics.
func (b *bench) seed(ctx context.Context, n int) error {
	var have int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM orders WHERE customer_id = $1`, b.seedID).Scan(&have); err != nil {
		return err
	}
	if add := n - have; add > 0 {
		// In chunks of a million, so no one statement holds the whole batch in memory.
		for done := 0; done < add; done += 1_000_000 {
			k := min(1_000_000, add-done)
			if _, err := b.pool.Exec(ctx, `
				WITH o AS (
					INSERT INTO orders (customer_id, description, price, created_at)
					SELECT $1, 'Seeded order ' || g, 100 + (g::bigint * 7919) % 100000, now() - make_interval(secs => g)
					FROM generate_series(1, $2) AS g RETURNING 1
				), c AS (SELECT count(*) AS k FROM o)
				INSERT INTO order_counters (scope, owner_id, slot, n)
				SELECT s.scope, s.owner_id, 0, c.k FROM c, (VALUES ('waiting', 0::bigint), ('customer', $1)) AS s(scope, owner_id)
				ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`, b.seedID, k); err != nil {
				return err
			}
		}
	}
	_, err := b.pool.Exec(ctx, "VACUUM ANALYZE orders")
	return err
}

func (b *bench) do(method, path, tok string, body []byte, want int) bool {
	req, _ := http.NewRequest(method, b.url+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := b.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == want
}

func (b *bench) get(path, tok string) bool { return b.do("GET", path, tok, nil, http.StatusOK) }

// pageTime is the median time of 100 sequential requests for path, after 10 untimed ones.
func (b *bench) pageTime(path, tok string) time.Duration {
	var times []time.Duration
	for i := range 110 {
		s := time.Now()
		if !b.get(path, tok) {
			log.Fatalf("GET %s failed", path)
		}
		if i >= 10 {
			times = append(times, time.Since(s))
		}
	}
	slices.Sort(times)
	return times[len(times)/2]
}

// load runs op from c clients for the run length and returns the successful operations per
// second; op reports success, and returns false also when a client has no work left.
func (b *bench) load(c int, op func(client int) bool) float64 {
	var ok atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(b.dur)
	start := time.Now()
	for i := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if !op(i) {
					return
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds()
}

var createBody = []byte(`{"description":"Curve order: paint the fence","price":120.50}`)

func (b *bench) creates(c int) float64 {
	return b.load(c, func(i int) bool { return b.do("POST", "/orders", b.custTok[i], createBody, http.StatusCreated) })
}

// accepts prepares enough READY orders for c clients (client i accepts orders of pair i, so no
// two clients pay from one balance), then runs the acceptances.
func (b *bench) accepts(ctx context.Context, c int) (float64, error) {
	// Enough for any client at any rate seen here, without seeding millions at 256 clients.
	perClient := max(100, 30000/c)
	rows, err := b.pool.Query(ctx, `
		INSERT INTO orders (customer_id, performer_id, description, price, status)
		SELECT c, p, 'Curve order to accept', 12050, 'READY'
		FROM unnest($1::bigint[], $2::bigint[]) AS x(c, p), generate_series(1, $3)
		RETURNING id, customer_id`, b.custID[:c], b.perfID[:c], perClient)
	if err != nil {
		return 0, err
	}
	slot := map[int64]int{}
	for i, id := range b.custID {
		slot[id] = i
	}
	b.ready = make([][]int64, c)
	b.next = make([]atomic.Int64, c)
	for rows.Next() {
		var id, cust int64
		if err := rows.Scan(&id, &cust); err != nil {
			return 0, err
		}
		b.ready[slot[cust]] = append(b.ready[slot[cust]], id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// Orders added straight as READY are counted in their users' lists, as the API would have.
	if _, err := b.pool.Exec(ctx, `
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT s.scope, s.owner_id, 0, $3 FROM (
			SELECT 'customer' AS scope, unnest($1::bigint[]) AS owner_id UNION ALL SELECT 'performer', unnest($2::bigint[])) AS s
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`,
		b.custID[:c], b.perfID[:c], perClient); err != nil {
		return 0, err
	}
	// And held by their performers, as a take would have counted them (an acceptance lowers it).
	if _, err := b.pool.Exec(ctx, `UPDATE order_users SET holding = holding + $2 WHERE id = ANY($1)`, b.perfID[:c], perClient); err != nil {
		return 0, err
	}
	failed := atomic.Int64{}
	rate := b.load(c, func(i int) bool {
		k := b.next[i].Add(1) - 1
		if k >= int64(len(b.ready[i])) {
			return false
		}
		if !b.do("PATCH", fmt.Sprintf("/orders/%d/accept", b.ready[i][k]), b.custTok[i], nil, http.StatusOK) {
			failed.Add(1)
			return false
		}
		return true
	})
	if failed.Load() > 0 {
		return 0, fmt.Errorf("%d accepts failed", failed.Load())
	}
	// Orders left unaccepted stay READY: completing them outside the API would break the ledger.
	return rate, nil
}

func (b *bench) rss() string {
	if b.pid == 0 {
		return "-"
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return fmt.Sprintf("%.0f", float64(kb)/1024)
		}
	}
	return "?"
}
