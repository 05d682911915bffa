package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// listsConfig is the list-fairness run (-lists): hammers accounts each page deep through its own
// list of ordersEach orders while a bystander reads its first page.
type listsConfig struct {
	hammers, ordersEach, conns, page, size int
	duration, maxMedian                    time.Duration
}

// runLists is the list-fairness load run of issue 32: hammers customers, each with ordersEach
// orders of its own, page through their own lists by price (page page of size size) on conns
// connections each, while a bystander customer reads page 0 of its own list one request after
// another. It prints the bystander's median alone and under the hammer, and fails (exit 1) when
// the median under the hammer exceeds maxMedian.
func runLists(srv *server, dir string, c listsConfig) (ok bool, err error) {
	ctx := context.Background()
	type customer struct {
		id    int64
		token string
	}
	signUp := func(name string) (customer, error) {
		cl := clientFrom("127.0.0.5")
		resp, err := cl.Do(jsonReq(ctx, srv.base+"/users", map[string]string{"username": name, "password": name + "-password-1", "userType": "Customer"}))
		if err != nil {
			return customer{}, err
		}
		var u struct{ ID int64 }
		err = json.NewDecoder(resp.Body).Decode(&u)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			return customer{}, fmt.Errorf("register %s: %d %v", name, resp.StatusCode, err)
		}
		resp, err = cl.Do(form(ctx, srv.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {srv.clientID},
			"client_secret": {srv.secret}, "username": {name}, "password": {name + "-password-1"}}))
		if err != nil {
			return customer{}, err
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		err = json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if err != nil || tok.AccessToken == "" {
			return customer{}, fmt.Errorf("login %s: %d %v", name, resp.StatusCode, err)
		}
		return customer{u.ID, tok.AccessToken}, nil
	}
	bystander, err := signUp("bystander")
	if err != nil {
		return false, err
	}
	var hammers []customer
	for i := range c.hammers {
		h, err := signUp(fmt.Sprintf("hammer%d", i))
		if err != nil {
			return false, err
		}
		hammers = append(hammers, h)
	}

	// Seed straight into the managed PostgreSQL (its socket is in the data folder): the hammers'
	// orders and the bystander's 100, with their list counters, as the service would count them.
	conn, err := pgx.Connect(ctx, "postgres://postgres@/triad?host="+filepath.Join(dir, "data", "pg"))
	if err != nil {
		return false, fmt.Errorf("seeding: %w", err)
	}
	defer conn.Close(ctx)
	seeded := time.Now()
	seed := func(id int64, n int) error {
		_, err := conn.Exec(ctx, `
			WITH o AS (
				INSERT INTO orders (customer_id, description, price)
				SELECT $1, 'seeded order ' || g, (1 + (g::bigint * 7919) % 100000000)::integer FROM generate_series(1, $2) AS g
				RETURNING customer_id
			)
			INSERT INTO order_counters (scope, owner_id, slot, n)
			SELECT x.scope, x.owner_id, 0, count(*) FROM o, LATERAL (VALUES ('waiting', 0::bigint), ('customer', o.customer_id)) AS x(scope, owner_id)
			GROUP BY x.scope, x.owner_id
			ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`, id, n)
		return err
	}
	for _, h := range hammers {
		if err := seed(h.id, c.ordersEach); err != nil {
			return false, fmt.Errorf("seeding: %w", err)
		}
	}
	if err := seed(bystander.id, 100); err != nil {
		return false, fmt.Errorf("seeding: %w", err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE orders"); err != nil {
		return false, err
	}
	fmt.Printf("seeded %d customers × %d orders in %s\n", c.hammers, c.ordersEach, time.Since(seeded).Round(time.Second))

	get := func(cl *http.Client, cu customer, query string) (int, time.Duration) {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/users/%d/orders?%s", srv.base, cu.id, query), nil)
		req.Header.Set("Authorization", "Bearer "+cu.token)
		start := time.Now()
		resp, err := cl.Do(req)
		if err != nil {
			return 0, time.Since(start)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	first := "page=0&size=20&sort=price,asc"
	deep := fmt.Sprintf("page=%d&size=%d&sort=price,asc", c.page, c.size)
	bystanderRun := func(d time.Duration) (time.Duration, int, error) {
		cl := clientFrom("127.0.0.6")
		var times []time.Duration
		for end := time.Now().Add(d); time.Now().Before(end); {
			st, took := get(cl, bystander, first)
			if st != http.StatusOK {
				return 0, 0, fmt.Errorf("bystander's page 0: %d", st)
			}
			times = append(times, took)
		}
		slices.Sort(times)
		return times[len(times)/2], len(times), nil
	}
	alone, n, err := bystanderRun(3 * time.Second)
	if err != nil {
		return false, err
	}
	_, deepAlone := get(clientFrom("127.0.0.7"), hammers[0], deep)
	fmt.Printf("alone: bystander page 0 median %s (%d reads); one deep page (%s) %s\n", alone.Round(time.Microsecond), n, deep, deepAlone.Round(time.Microsecond))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var deepOK, deepOther atomic.Int64
	for i, h := range hammers {
		cl := clientFrom(fmt.Sprintf("127.0.2.%d", 1+i))
		cl.Transport.(*http.Transport).MaxConnsPerHost = c.conns
		cl.Transport.(*http.Transport).MaxIdleConnsPerHost = c.conns
		for range c.conns {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if st, _ := get(cl, h, deep); st == http.StatusOK {
						deepOK.Add(1)
					} else {
						deepOther.Add(1)
					}
				}
			})
		}
	}
	time.Sleep(time.Second)
	under, n, err := bystanderRun(c.duration)
	close(stop)
	wg.Wait()
	if err != nil {
		return false, err
	}
	fmt.Printf("under %d accounts × %d connections paging %s: bystander page 0 median %s (%d reads); hammer %d pages served, %d other answers\n",
		c.hammers, c.conns, deep, under.Round(time.Microsecond), n, deepOK.Load(), deepOther.Load())
	var failures []string
	if under > c.maxMedian {
		failures = append(failures, fmt.Sprintf("bystander's median %s > %s", under.Round(time.Microsecond), c.maxMedian))
	}
	if deepOK.Load() == 0 {
		failures = append(failures, "no deep page served")
	}
	if len(failures) > 0 {
		fmt.Println("FAIL:", strings.Join(failures, "; "))
		return false, nil
	}
	fmt.Println("PASS")
	return true, nil
}
