//go:build ha

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// haLoad is the bounded mixed load of `make test-ha`, through the balancer: creators POST orders,
// each with an Idempotency-Key of its own that its retries repeat until a 201 (for up to 30 s);
// listers read the customer's first page; one client logs in with the password grant. Every
// worker pauses between requests, so the load is the same whatever the machine's speed.
type haLoad struct {
	t        *testing.T
	base     string
	token    string
	userID   int64
	user     string
	hc       *http.Client
	mu       sync.Mutex
	acks     []haAck // every create acknowledged, over all runs
	keyCount atomic.Int64
}

type haAck struct {
	id  int64
	key string    // the Idempotency-Key, also the order's description: what the id must still name
	at  time.Time // when the 201 arrived
}

// haResult is what one run saw.
type haResult struct {
	acked       []haAck
	errors      time.Duration // from the start of the first failed request to the end of the last
	requests    int
	failed      int
	readsFailed int           // list reads that failed (the read URL's standby should serve them)
	balancer503 int           // the balancer's own 503 (no server in its rotation), not a server's JSON
	firstError  time.Duration // from the fault to the first failure
	faultAt     time.Time     // when the fault was injected
	errorSpan   [2]time.Time  // the first failed request's start, the last one's end (for the stack's logs)
	sample      string        // one failure, for the log
	readSample  string        // one failed read, for the log
}

func newHALoad(t *testing.T, base string, userID int64, user string) *haLoad {
	t.Helper()
	l := &haLoad{t: t, base: base, userID: userID, user: user, hc: &http.Client{Timeout: 30 * time.Second}}
	status, body, err := l.login()
	if err != nil || status != http.StatusOK {
		t.Fatalf("login: %d %v %s", status, err, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("login: %s", body)
	}
	l.token = tok.AccessToken
	return l
}

// do sends one request and reads its answer.
func (l *haLoad) do(req *http.Request) (int, []byte, string, error) {
	resp, err := l.hc.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, resp.Header.Get("Content-Type"), err
}

func (l *haLoad) login() (int, []byte, error) {
	form := url.Values{"grant_type": {"password"}, "username": {l.user}, "password": {l.user + "-password"}}
	req, _ := http.NewRequest(http.MethodPost, l.base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	id, secret := ordersClient()
	req.SetBasicAuth(id, secret)
	status, body, _, err := l.do(req)
	return status, body, err
}

// ackedBefore is every create acknowledged before t.
func (l *haLoad) ackedBefore(t time.Time) []haAck {
	l.mu.Lock()
	defer l.mu.Unlock()
	var acks []haAck
	for _, a := range l.acks {
		if a.at.Before(t) {
			acks = append(acks, a)
		}
	}
	return acks
}

// run drives the load, injects the fault 1.5 s in, and stops once at least 3 s have passed since
// inject returned and no request has failed for 2 s (at most two minutes after it returned);
// pending creates finish their retries.
func (l *haLoad) run(ctx context.Context, inject func(context.Context) error) haResult {
	var (
		mu                  sync.Mutex
		r                   haResult
		firstStart, lastEnd time.Time
		lastFailure, lastOK time.Time
		stop                atomic.Bool
		wg                  sync.WaitGroup
	)
	record := func(start time.Time, ok bool, status int, ctype string, err error, what string) {
		end := time.Now()
		mu.Lock()
		defer mu.Unlock()
		r.requests++
		if ok {
			lastOK = end
			return
		}
		r.failed++
		if strings.HasPrefix(what, "list") {
			r.readsFailed++
			if r.readSample == "" {
				r.readSample = fmt.Sprintf("%s at %s: status %d, err %v", what, clock(start), status, err)
			}
		}
		if status == http.StatusServiceUnavailable && !strings.HasPrefix(ctype, "application/json") {
			r.balancer503++
		}
		if firstStart.IsZero() || start.Before(firstStart) {
			firstStart = start
		}
		if end.After(lastEnd) {
			lastEnd = end
		}
		lastFailure = end
		if r.sample == "" {
			r.sample = fmt.Sprintf("%s: status %d, err %v", what, status, err)
		}
	}
	create := func() {
		key := fmt.Sprintf("ha-%d-%d", time.Now().UnixNano(), l.keyCount.Add(1))
		first := time.Now()
		for time.Since(first) < 30*time.Second {
			start := time.Now()
			req, _ := http.NewRequest(http.MethodPost, l.base+"/orders", strings.NewReader(`{"description":"`+key+`","price":0.01}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+l.token)
			req.Header.Set("Idempotency-Key", key)
			status, body, ctype, err := l.do(req)
			var o struct {
				ID int64 `json:"id"`
			}
			if err == nil && status == http.StatusCreated && json.Unmarshal(body, &o) == nil && o.ID > 0 {
				record(start, true, status, ctype, nil, "create")
				a := haAck{id: o.ID, key: key, at: time.Now()}
				mu.Lock()
				r.acked = append(r.acked, a)
				mu.Unlock()
				l.mu.Lock()
				l.acks = append(l.acks, a)
				l.mu.Unlock()
				return
			}
			record(start, false, status, ctype, err, "create "+string(body))
			time.Sleep(100 * time.Millisecond)
		}
	}
	list := func() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/users/%d/orders?page=0&size=20", l.base, l.userID), nil)
		req.Header.Set("Authorization", "Bearer "+l.token)
		status, body, ctype, err := l.do(req)
		record(start, err == nil && status == http.StatusOK, status, ctype, err, "list "+string(body))
	}
	login := func() {
		start := time.Now()
		status, body, err := l.login()
		record(start, err == nil && status == http.StatusOK, status, "application/json", err, "login "+string(body))
	}
	worker := func(op func(), pause time.Duration) {
		defer wg.Done()
		for !stop.Load() {
			op()
			time.Sleep(pause)
		}
	}
	for range 4 {
		wg.Add(1)
		go worker(create, 25*time.Millisecond)
	}
	for range 2 {
		wg.Add(1)
		go worker(list, 50*time.Millisecond)
	}
	wg.Add(1)
	go worker(login, 500*time.Millisecond)

	time.Sleep(1500 * time.Millisecond)
	faultAt := time.Now()
	r.faultAt = faultAt
	err := inject(ctx)
	injected := time.Now()
	for err == nil {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		quiet := time.Since(injected) > 3*time.Second && (lastFailure.IsZero() || time.Since(lastFailure) > 2*time.Second) && lastOK.After(lastFailure)
		mu.Unlock()
		if quiet || time.Since(injected) > 2*time.Minute {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if err != nil {
		l.t.Fatalf("injecting the fault: %v", err)
	}
	if !firstStart.IsZero() {
		r.errors = lastEnd.Sub(firstStart)
		r.firstError = firstStart.Sub(faultAt)
		r.errorSpan = [2]time.Time{firstStart, lastEnd}
	}
	return r
}
