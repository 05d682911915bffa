package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/opaquetoken/watchertest"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// The benchmarks live in package httpapi (the test binary's TestMain, in httpapi_test, starts the
// database) so they can set fixtures up in SQL and reach the bearer middleware directly. Each
// reports its figure against a baseline measured in the same run, as a ratio.

const benchClientID, benchClientSecret = "bench-client", "bench-secret"

// benchAPI is the API as the server runs it: with a Watcher, so resolved tokens are cached.
func benchAPI(b *testing.B, pool *pgxpool.Pool) (http.Handler, *API) {
	b.Helper()
	w := opaquetoken.NewWatcher(pool, nil)
	a, err := New(pool, Options{ClientID: benchClientID, ClientSecret: benchClientSecret,
		Options: tokenedge.Options{TokenTTL: time.Hour, Hasher: password.New(password.Params{Time: 1, Memory: 64, Threads: 1}),
			Revocations: w}})
	if err != nil {
		b.Fatal(err)
	}
	watchertest.Run(b, w)
	h, err := router.Standalone(nil, a.Mount)
	if err != nil {
		b.Fatal(err)
	}
	return h, a
}

// fixtureUsers inserts n users of a role straight into the tables, each with a ledger grant so the
// money invariant holds, and issues each a token. (Registration over HTTP would spend seconds in
// argon2, which is not what these benchmarks measure.)
func fixtureUsers(b *testing.B, pool *pgxpool.Pool, a *API, prefix string, t orders.UserType, n int, balance int64) []orders.Principal {
	b.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT $1 || g, 'x', $2, $3 FROM generate_series(1, $4) AS g
			RETURNING id, username, balance
		), l AS (
			INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', balance FROM u
		)
		SELECT id, username FROM u ORDER BY id`, prefix, string(t), balance, n)
	if err != nil {
		b.Fatal(err)
	}
	var out []orders.Principal
	for rows.Next() {
		p := orders.Principal{Type: t}
		if err := rows.Scan(&p.ID, &p.Username); err != nil {
			b.Fatal(err)
		}
		out = append(out, p)
	}
	if rows.Err() != nil {
		b.Fatal(rows.Err())
	}
	return out
}

func issue(b *testing.B, a *API, p orders.Principal) string {
	b.Helper()
	tok, err := a.edge.Tokens.Issue(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// BenchmarkListNewOrders: GET /orders with 1,000,000 waiting orders, page 0 and page 500 (size 20),
// served in process through the whole handler stack (request id, bearer check, parameter binding
// and page bounds, strict handler, one SQL round trip, JSON), against the raw one-query pgx baseline
// reading the same page.
// x-baseline is our throughput over the baseline's; the target is at least 0.5.
func BenchmarkListNewOrders(b *testing.B) {
	pool := dbtest.New(b)
	h, a := benchAPI(b, pool)
	ctx := context.Background()
	customer := fixtureUsers(b, pool, a, "cust", orders.Customer, 1, 50000)[0]
	performer := fixtureUsers(b, pool, a, "perf", orders.Performer, 1, 30000)[0]
	const n = 1_000_000
	start := time.Now()
	if _, err := pool.Exec(ctx, `
		INSERT INTO orders (customer_id, description, price, created_at)
		SELECT $1, 'Benchmark order ' || g, 100 + (g::bigint * 7919) % 100000, now() - make_interval(secs => $2 - g)
		FROM generate_series(1, $2) AS g`, customer.ID, n); err != nil {
		b.Fatal(err)
	}
	// The counters the inserted orders would have moved, as CreateOrder keeps them.
	if _, err := pool.Exec(ctx, `UPDATE order_counters SET n = $1 WHERE scope = 'waiting'`, n); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO order_counters (scope, owner_id, n) VALUES ('customer', $1, $2)`, customer.ID, n); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE orders"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d orders in %v", n, time.Since(start))
	tok := issue(b, a, performer)

	for _, page := range []int{0, 500} {
		b.Run(fmt.Sprintf("page%d", page), func(b *testing.B) {
			req := func() *http.Request {
				r := httptest.NewRequest("GET", fmt.Sprintf("/orders?page=%d&size=20", page), nil)
				r.Header.Set("Authorization", "Bearer "+tok)
				return r
			}
			// Warm up and check the answer once.
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req())
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
			baseline := func() {
				rows, err := pool.Query(ctx, `SELECT id, customer_id, performer_id, description, price, status, created_at
					FROM orders WHERE status = 'WAITING' ORDER BY id LIMIT 20 OFFSET $1`, page*20)
				if err != nil {
					b.Fatal(err)
				}
				var (
					id, cust, price int64
					perf            *int64
					desc, status    string
					created         time.Time
				)
				count := 0
				for rows.Next() {
					if err := rows.Scan(&id, &cust, &perf, &desc, &price, &status, &created); err != nil {
						b.Fatal(err)
					}
					count++
				}
				if rows.Err() != nil || count != 20 {
					b.Fatalf("baseline read %d rows: %v", count, rows.Err())
				}
			}
			ours := func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req())
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
			b.ResetTimer()
			ratio := interleave(b, ours, baseline)
			b.ReportMetric(ratio, "x-baseline")
		})
	}
}

// interleave runs ours b.N times (the timed figure) and the baseline b.N times, alternating in
// rounds so that both see the same machine load, and returns baseline time / our time: our
// throughput as a multiple of the baseline's.
func interleave(b *testing.B, ours, baseline func()) float64 {
	var tOurs, tBase time.Duration
	const round = 16
	timeBase := func(k int) {
		b.StopTimer()
		s := time.Now()
		for range k {
			baseline()
		}
		tBase += time.Since(s)
		b.StartTimer()
	}
	for done, r := 0, 0; done < b.N; r++ {
		k := min(round, b.N-done)
		// Alternate which side goes first so neither always runs on a warmer machine.
		if r%2 == 0 {
			timeBase(k)
		}
		s := time.Now()
		for range k {
			ours()
		}
		tOurs += time.Since(s)
		if r%2 == 1 {
			timeBase(k)
		}
		done += k
	}
	return float64(tBase) / float64(tOurs)
}

// BenchmarkBearerCheck: the cost the bearer check adds to a request, against a bare chi handler
// writing a small JSON body (the baseline of cmd/benchbase), both served by net/http over a real
// loopback connection, as a client sees them. overhead-x-bare is (ours - bare) / bare; the target
// is at most 0.10. The same comparison in process (ServeHTTP with a recorder, no server or
// network) is reported beside it as inproc-overhead-ns and inproc-overhead-x-bare: there the
// check's two small allocations (context value, request copy) weigh against a handler that does
// almost nothing. Machine noise on the shared box is damped by interleaving both sides in short
// rounds and keeping each side's fastest round.
func BenchmarkBearerCheck(b *testing.B) {
	pool := dbtest.New(b)
	_, a := benchAPI(b, pool)
	p := fixtureUsers(b, pool, a, "perf", orders.Performer, 1, 30000)[0]
	tok := issue(b, a, p)
	handler := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	}
	bare := chi.NewRouter()
	bare.Get("/x", handler)
	guarded := chi.NewRouter()
	guarded.Use(bearer.New(a.edge.Tokens.Resolve, bearer.Options[orders.Principal]{Realm: "orders"}).Middleware) // every request needs a token
	guarded.Get("/x", func(w http.ResponseWriter, r *http.Request) {
		if principal(r.Context()).ID != p.ID {
			http.Error(w, "no principal", http.StatusInternalServerError)
			return
		}
		handler(w, r)
	})
	inproc := func(h http.Handler) func() {
		req := httptest.NewRequest("GET", "/x", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		return func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		}
	}
	bareSrv, guardedSrv := httptest.NewServer(bare), httptest.NewServer(guarded)
	defer bareSrv.Close()
	defer guardedSrv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	overHTTP := func(url string) func() {
		return func() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatalf("status %d", res.StatusCode)
			}
		}
	}
	b.ResetTimer()
	// At least 64 rounds a side whatever b.N is: the fastest round is only a stable figure over many.
	ours, base := bestRounds(b, max(b.N/4, 1024), 16, overHTTP(guardedSrv.URL+"/x"), overHTTP(bareSrv.URL+"/x"))
	b.ReportMetric(float64(base.Nanoseconds()), "bare-ns")
	b.ReportMetric(float64(ours-base)/float64(base), "overhead-x-bare")
	ours, base = bestRounds(b, max(b.N, 8192), 32, inproc(guarded), inproc(bare))
	b.ReportMetric(float64((ours - base).Nanoseconds()), "inproc-overhead-ns")
	b.ReportMetric(float64(ours-base)/float64(base), "inproc-overhead-x-bare")
}

// bestRounds runs ours and baseline n times each, interleaved in rounds of k, and returns each
// side's fastest per-call time over the rounds: the figure least disturbed by other processes.
func bestRounds(b *testing.B, n, k int, ours, baseline func()) (time.Duration, time.Duration) {
	bestO, bestB := time.Duration(1<<62), time.Duration(1<<62)
	for done, r := 0, 0; done < n; r++ {
		for side := range 2 {
			f, best := ours, &bestO
			if (side+r)%2 == 0 {
				f, best = baseline, &bestB
			}
			s := time.Now()
			for range k {
				f()
			}
			if d := time.Since(s) / time.Duration(k); d < *best {
				*best = d
			}
		}
		done += k
	}
	return bestO, bestB
}

// BenchmarkAcceptThroughput: PATCH /orders/{id}/accept from 64 concurrent clients on distinct
// READY orders. accepts/s (target at least 2,000) is over real HTTP, the clients' own CPU included
// (on the shared 2-core box they compete with the server for it); inproc-accepts/s is the same
// handler called in process by 64 goroutines, the server's cost without the network and the load
// generator. The same-run baseline is 64 clients committing a one-row UPDATE transaction through
// raw pgx; x-baseline is accepts/s over it (the gated ratio). x-baseline-http is accepts/s over the
// same transaction served by a bare handler over HTTP, as the create and subscribe baselines are:
// reported, not gated, so the two readings of "the one-row-UPDATE baseline" sit side by side. The
// benchmark fails if any accept failed or the ledger invariant broke afterwards.
//
// The one-row baseline is far below what any acceptance can cost: the ledger invariant needs the
// customer's and the performer's balances, a platform slot, three ledger rows and the order's status
// written in one transaction. So the run also measures that floor: 64 clients each sending those
// writes as one raw pgx statement (no rules, no checks, no HTTP) on READY orders of their own;
// x-floor is accepts/s over it, the share of the unavoidable database work that the whole stack
// (HTTP, bearer check, the rules in order_accept) keeps.
func BenchmarkAcceptThroughput(b *testing.B) {
	const clients = 64
	pool := dbtest.New(b)
	h, a := benchAPI(b, pool)
	ctx := context.Background()
	// Customers get a large grant so that funds never run out whatever b.N is.
	customers := fixtureUsers(b, pool, a, "cust", orders.Customer, clients, 1_000_000_000)
	performers := fixtureUsers(b, pool, a, "perf", orders.Performer, clients, 30000)
	tokens := make([]string, clients)
	for i, c := range customers {
		tokens[i] = issue(b, a, c)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The same one-row UPDATE transaction served over HTTP by a bare handler, reported beside the
	// raw one: it shows what the HTTP round trip alone costs on these two cores.
	// bump is the baseline's transaction: one row of client c's updated and committed.
	bump := func(ctx context.Context, c int) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE bench_baseline SET n = n + 1 WHERE id = $1", c); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		return tx.Commit(ctx)
	}
	baseSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := strconv.Atoi(r.URL.Query().Get("c"))
		if err := bump(r.Context(), c); err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"COMPLETED"}`+"\n")
	}))
	defer baseSrv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var failures atomic.Int64
	// patch sends PATCH url (with token, if any) and counts anything but a 200 as a failure.
	patch := func(url, token string) {
		req, _ := http.NewRequest("PATCH", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			failures.Add(1)
		}
		if res != nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE bench_baseline (id int PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO bench_baseline SELECT g, 0 FROM generate_series(0, 63) AS g`); err != nil {
		b.Fatal(err)
	}

	var accepted, acceptedInproc, baselineTx, baselineHTTPTx, floorTx int64
	var tOurs, tInproc, tBase, tBaseHTTP, tFloor time.Duration
	run := func(n int, work func(client, i int)) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for c := range clients {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					work(c, i)
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	// ready inserts k READY orders: order i belongs to customer i%64 and performer i%64, so each
	// client accepts its own customer's orders. It returns each customer's order ids.
	ready := func(k int) [][]int64 {
		ids := make([][]int64, clients)
		// A READY order counts among what its performer holds, which its acceptance lowers.
		rows, err := pool.Query(ctx, `
			WITH o AS (
				INSERT INTO orders (customer_id, performer_id, description, price, status)
				SELECT c.id, p.id, 'bench', 100, 'READY'
				FROM generate_series(0, $3 - 1) AS g
				JOIN LATERAL (SELECT ($1::bigint[])[g % 64 + 1] AS id) c ON true
				JOIN LATERAL (SELECT ($2::bigint[])[g % 64 + 1] AS id) p ON true
				RETURNING id, customer_id, performer_id
			), held AS (
				UPDATE order_users u SET holding = u.holding + h.n
				FROM (SELECT performer_id, count(*)::integer AS n FROM o GROUP BY performer_id) h WHERE u.id = h.performer_id
			)
			SELECT id, customer_id FROM o`, idsOf(customers), idsOf(performers), k)
		if err != nil {
			b.Fatal(err)
		}
		slot := map[int64]int{}
		for i, c := range customers {
			slot[c.ID] = i
		}
		for rows.Next() {
			var id, cust int64
			if err := rows.Scan(&id, &cust); err != nil {
				b.Fatal(err)
			}
			ids[slot[cust]] = append(ids[slot[cust]], id)
		}
		return ids
	}
	// One round: k READY orders accepted by the 64 clients over HTTP or in process (timed), k
	// baseline transactions and, over HTTP, the floor's writes on k more orders, each timed apart,
	// ours first in odd rounds and last in even ones.
	rounds := 0
	round := func(k int, viaHTTP, timed bool) {
		ids := ready(k)
		var cursor [clients]atomic.Int64
		oursRun := func() time.Duration {
			b.StartTimer()
			defer b.StopTimer()
			return run(k, func(c, _ int) {
				// Each worker serves its own customer while that customer has orders left, then helps.
				for j := range clients {
					cc := (c + j) % clients
					i := int(cursor[cc].Add(1)) - 1
					if i < len(ids[cc]) {
						path := fmt.Sprintf("/orders/%d/accept", ids[cc][i])
						if !viaHTTP {
							req := httptest.NewRequest("PATCH", path, nil)
							req.Header.Set("Authorization", "Bearer "+tokens[cc])
							w := httptest.NewRecorder()
							h.ServeHTTP(w, req)
							if w.Code != http.StatusOK {
								failures.Add(1)
							}
							return
						}
						patch(srv.URL+path, tokens[cc])
						return
					}
				}
			})
		}
		baseRun := func() time.Duration {
			return run(k, func(c, _ int) {
				if err := bump(ctx, c); err != nil {
					failures.Add(1)
				}
			})
		}
		baseHTTPRun := func() time.Duration {
			return run(k, func(c, _ int) { patch(fmt.Sprintf("%s/x?c=%d", baseSrv.URL, c), "") })
		}
		var floorRun func() time.Duration
		if viaHTTP {
			floorIDs := ready(k)
			var fcursor [clients]atomic.Int64
			floorRun = func() time.Duration {
				return run(k, func(c, _ int) {
					for j := range clients {
						cc := (c + j) % clients
						i := int(fcursor[cc].Add(1)) - 1
						if i < len(floorIDs[cc]) {
							if _, err := pool.Exec(ctx, floorSQL, floorIDs[cc][i]); err != nil {
								failures.Add(1)
							}
							return
						}
					}
				})
			}
		}
		var dOurs, dBase, dBaseHTTP, dFloor time.Duration
		// Alternate which side goes first, so neither always meets a warmer or a busier machine.
		if rounds++; rounds%2 == 1 {
			dOurs, dBase = oursRun(), baseRun()
			if floorRun != nil {
				dFloor, dBaseHTTP = floorRun(), baseHTTPRun()
			}
		} else {
			if floorRun != nil {
				dBaseHTTP, dFloor = baseHTTPRun(), floorRun()
			}
			dBase, dOurs = baseRun(), oursRun()
		}
		switch {
		case !timed:
		case viaHTTP:
			tOurs, tBase, tBaseHTTP, tFloor = tOurs+dOurs, tBase+dBase, tBaseHTTP+dBaseHTTP, tFloor+dFloor
			accepted, baselineTx, floorTx = accepted+int64(k), baselineTx+int64(k), floorTx+int64(k)
			baselineHTTPTx += int64(k)
		default:
			tInproc, acceptedInproc = tInproc+dOurs, acceptedInproc+int64(k)
		}
	}
	b.ResetTimer()
	b.StopTimer()
	// An untimed warm-up opens the connections and prepares the statements on both sides.
	round(256, true, false)
	round(256, false, false)
	// At least 2,048 timed accepts each way, so that even -benchtime=1x gives a meaningful rate, in
	// short rounds so that a neighbour's burst on the shared machine lands on both sides alike.
	total := max(b.N, 2048)
	for done := 0; done < total; {
		k := min(512, total-done)
		round(k, true, true)
		round(k, false, true)
		done += k
	}
	if failures.Load() != 0 {
		b.Fatalf("%d accepts or baseline transactions failed", failures.Load())
	}
	var broken int64
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM order_users WHERE balance < 0)
		+ (SELECT count(*) FROM order_users u WHERE u.balance <> (SELECT coalesce(sum(amount), 0) FROM order_ledger l WHERE l.user_id = u.id))
		+ CASE WHEN (SELECT sum(balance) FROM order_users) + (SELECT sum(balance) FROM order_platform_slots)
		          = (SELECT sum(amount) FROM order_ledger WHERE kind = 'grant') THEN 0 ELSE 1 END
		+ (SELECT count(*) FROM orders WHERE status <> 'COMPLETED')`).Scan(&broken); err != nil {
		b.Fatal(err)
	}
	if broken != 0 {
		b.Fatalf("%d invariant breaks after the run", broken)
	}
	ours := float64(accepted) / tOurs.Seconds()
	base := float64(baselineTx) / tBase.Seconds()
	b.ReportMetric(ours, "accepts/s")
	b.ReportMetric(float64(acceptedInproc)/tInproc.Seconds(), "inproc-accepts/s")
	b.ReportMetric(base, "baseline-tx/s")
	b.ReportMetric(ours/base, "x-baseline")
	baseHTTP := float64(baselineHTTPTx) / tBaseHTTP.Seconds()
	b.ReportMetric(baseHTTP, "baseline-http-tx/s")
	b.ReportMetric(ours/baseHTTP, "x-baseline-http")
	floor := float64(floorTx) / tFloor.Seconds()
	b.ReportMetric(floor, "floor-tx/s")
	b.ReportMetric(ours/floor, "x-floor")
	b.ReportMetric(0, "invariant-breaks")
}

// floorSQL is the least database work an acceptance can do and keep the ledger invariant: the
// order completed, the customer debited price + commission, the performer credited the price, a
// platform slot credited the commission, three ledger rows; one statement, no checks.
const floorSQL = `
WITH o AS (
	UPDATE orders SET status = 'COMPLETED', updated_at = now() WHERE id = $1
	RETURNING id, customer_id, performer_id, price, order_commission(price) AS commission
), debit AS (
	UPDATE order_users u SET balance = u.balance - (o.price + o.commission) FROM o WHERE u.id = o.customer_id
), credit AS (
	UPDATE order_users u SET balance = u.balance + o.price FROM o WHERE u.id = o.performer_id
), platform AS (
	UPDATE order_platform_slots s SET balance = s.balance + o.commission FROM o WHERE s.slot = o.id % 16
)
INSERT INTO order_ledger (user_id, order_id, kind, amount)
SELECT l.user_id, o.id, l.kind, l.amount FROM o, LATERAL (VALUES
	(o.customer_id, 'payment', -(o.price + o.commission)),
	(o.performer_id, 'earning', o.price),
	(NULL, 'commission', o.commission)) AS l(user_id, kind, amount)`

func idsOf(ps []orders.Principal) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}
