package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// BenchmarkCreateThroughput: POST /orders from 64 concurrent clients over real HTTP, against a
// baseline handler over the same schema and the same pool doing the least a create can do: a chi
// handler decoding the same body and running one INSERT INTO orders (no authentication, no
// validation, no list counters), served the same way. Both sides run in alternating rounds of
// the same run. x-baseline is our throughput over the baseline's; the target is at least 0.8.
// The benchmark fails if any create failed or the new-orders list's total is not exact afterwards.
func BenchmarkCreateThroughput(b *testing.B) {
	const clients = 64
	pool := dbtest.New(b)
	h, a := benchAPI(b, pool)
	ctx := context.Background()
	customers := fixtureUsers(b, pool, a, "cust", orders.Customer, clients, 1_000_000_000) // each create reserves its cost
	tokens := make([]string, clients)
	for i, c := range customers {
		tokens[i] = issue(b, a, c)
	}
	base := chi.NewRouter()
	base.Post("/orders", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Description string      `json:"description"`
			Price       json.Number `json:"price"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, "body", http.StatusBadRequest)
			return
		}
		cust, _ := strconv.ParseInt(r.Header.Get("X-Customer"), 10, 64)
		price, _ := strconv.ParseFloat(string(in.Price), 64)
		var id int64
		var created time.Time
		if err := pool.QueryRow(r.Context(), `INSERT INTO orders (customer_id, description, price) VALUES ($1, $2, $3)
			RETURNING id, created_at`, cust, in.Description, int64(price*100+0.5)).Scan(&id, &created); err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "customerId": cust, "description": in.Description,
			"price": in.Price, "status": "WAITING", "createdAt": created})
	})
	ourSrv, baseSrv := httptest.NewServer(h), httptest.NewServer(base)
	defer ourSrv.Close()
	defer baseSrv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	body := []byte(`{"description":"Benchmark order: paint the fence","price":120.50}`)

	var failures atomic.Int64
	// run sends n creates from the clients to url and returns how long they took.
	run := func(url string, n int) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for c := range clients {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					req, _ := http.NewRequest("POST", url+"/orders", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+tokens[c])
					req.Header.Set("X-Customer", strconv.FormatInt(customers[c].ID, 10))
					res, err := client.Do(req)
					if err != nil || res.StatusCode != http.StatusCreated {
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
	b.ResetTimer()
	b.StopTimer()
	run(ourSrv.URL, 256) // untimed warm-up: connections opened, statements prepared
	run(baseSrv.URL, 256)
	var tOurs, tBase time.Duration
	// At least 4,096 creates a side, in rounds of 256 that alternate which side goes first, so a
	// neighbour's burst on the shared machine lands on both sides alike.
	total := max(b.N, 4096)
	ourCreates := 256
	for done, r := 0, 0; done < total; r++ {
		k := min(256, total-done)
		if r%2 == 0 {
			tBase += run(baseSrv.URL, k)
		}
		b.StartTimer()
		tOurs += run(ourSrv.URL, k)
		b.StopTimer()
		if r%2 == 1 {
			tBase += run(baseSrv.URL, k)
		}
		done += k
		ourCreates += k
	}
	if failures.Load() != 0 {
		b.Fatalf("%d creates failed", failures.Load())
	}
	// The list's total must count every order ours created (the baseline's are not counted).
	var counted, waiting int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT n FROM order_list_sizes WHERE scope = 'waiting'), count(*) FROM orders`).
		Scan(&counted, &waiting); err != nil {
		b.Fatal(err)
	}
	if counted != int64(ourCreates) {
		b.Fatalf("new-orders total %d, want %d (of %d rows)", counted, ourCreates, waiting)
	}
	ours, baseRate := float64(total)/tOurs.Seconds(), float64(total)/tBase.Seconds()
	b.ReportMetric(ours, "creates/s")
	b.ReportMetric(baseRate, "baseline-inserts/s")
	b.ReportMetric(ours/baseRate, "x-baseline")
}
