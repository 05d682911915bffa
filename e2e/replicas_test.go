//go:build replicas

// The replica tests run in `make test-replicas` (part of `make test`), which builds them with the
// replicas tag: each starts three servers and HAProxy, so they run beside the suites that go through
// the balancer rather than again in the race run of every package.

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/http"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/surfaces/auth/sender/smtptest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestReplicas_LedgerExactUnderRacesThroughBalancer races performers for the same orders and
// customers for the same acceptance, every request going round-robin over three replicas: each
// order is taken once and paid once, and every balance is exact to the cent.
func TestReplicas_LedgerExactUnderRacesThroughBalancer(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	e := newOrdersEnvAt(t, c.lb.URL)
	ctx := context.Background()
	customer := e.signUp("replica-customer", ordersapi.Customer)
	performers := make([]ordersUser, 4)
	for i := range performers {
		performers[i] = e.signUp(fmt.Sprintf("replica-performer-%d", i), ordersapi.Performer)
	}

	const orderCount = 6
	ids := make([]int64, orderCount)
	for i := range ids {
		r, err := customer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: fmt.Sprintf("job %d", i), Price: "10.00"})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("create: %v %s", err, r.Body)
		}
		ids[i] = r.JSON201.Id
	}

	// Every performer tries to take every order at once: one wins each.
	winner := make([]int, orderCount)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, id := range ids {
		winner[i] = -1
		for p, perf := range performers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := perf.api.TakeOrderWithResponse(ctx, id, nil)
				if err != nil {
					t.Error(err)
					return
				}
				switch r.StatusCode() {
				case 200:
					mu.Lock()
					defer mu.Unlock()
					if winner[i] != -1 {
						t.Errorf("order %d taken twice (performers %d and %d)", id, winner[i], p)
					}
					winner[i] = p
				case 409:
				default:
					t.Errorf("take %d: status %d: %s", id, r.StatusCode(), r.Body)
				}
			}()
		}
	}
	wg.Wait()
	for i, id := range ids {
		if winner[i] < 0 {
			t.Fatalf("order %d was taken by nobody", id)
		}
		if r, err := performers[winner[i]].api.PassOrderWithResponse(ctx, id, nil); err != nil || r.StatusCode() != 200 {
			t.Fatalf("pass %d: %v", id, err)
		}
	}

	// The customer accepts every order three times at once, over the replicas: one payment each.
	var paid int
	for _, id := range ids {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := customer.api.AcceptOrderWithResponse(ctx, id, nil)
				if err != nil {
					t.Error(err)
					return
				}
				switch r.StatusCode() {
				case 200:
					mu.Lock()
					paid++
					mu.Unlock()
				case 409:
				default:
					t.Errorf("accept %d: status %d: %s", id, r.StatusCode(), r.Body)
				}
			}()
		}
	}
	wg.Wait()
	if paid != orderCount {
		t.Fatalf("%d acceptances succeeded, want %d (one per order)", paid, orderCount)
	}
	// 6 × (10.00 + 0.50 commission) left the customer; each performer got 10.00 per order it took.
	wantMoney(t, "customer's balance", customer.balance(t), "437")
	for p, perf := range performers {
		took := 0
		for _, w := range winner {
			if w == p {
				took++
			}
		}
		wantMoney(t, fmt.Sprintf("performer %d's balance", p), perf.balance(t), fmt.Sprint(300+10*took))
	}
}

// TestReplicas_KillOneMidLoad kills a replica (SIGKILL, no goodbye) while clients create orders
// through the balancer: every order the clients saw acknowledged (201) is in the customer's list
// afterwards, and the balancer keeps serving from the other replicas.
func TestReplicas_KillOneMidLoad(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	e := newOrdersEnvAt(t, c.lb.URL)
	customer := e.signUp("replica-load-customer", ordersapi.Customer)
	tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, "replica-load-customer", "replica-load-customer-password")
	if err != nil {
		t.Fatal(err)
	}
	// A plain client: the balancer's own 502/503 for a request caught by the kill is not the
	// server's answer, so it is counted here instead of being validated against the spec.
	hc := &http.Client{Timeout: 30 * time.Second}
	create := func() (int64, int, error) {
		req, _ := http.NewRequest(http.MethodPost, c.lb.URL+"/orders", strings.NewReader(`{"description":"load","price":0.01}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		var o struct {
			ID int64 `json:"id"`
		}
		if resp.StatusCode == http.StatusCreated {
			if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
				return 0, resp.StatusCode, err
			}
		}
		return o.ID, resp.StatusCode, nil
	}

	var (
		mu          sync.Mutex
		acked       []int64
		lateFailure []string
	)
	var killedAt atomic.Int64 // unix nanoseconds of the kill; 0 before
	stop := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				start := time.Now()
				id, status, err := create()
				mu.Lock()
				if status == http.StatusCreated && err == nil {
					acked = append(acked, id)
				} else {
					// A request sent well after the kill must not fail: the balancer has taken the
					// dead replica out of the rotation (or redispatched the refused connection).
					if at := killedAt.Load(); at != 0 && start.After(time.Unix(0, at).Add(time.Second)) {
						lateFailure = append(lateFailure, fmt.Sprintf("status %d, err %v", status, err))
					}
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	victim := c.nodes[1]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt.Store(time.Now().UnixNano())
	wg.Wait()

	if len(lateFailure) > 0 {
		t.Errorf("%d requests sent more than 1 s after the kill failed, e.g. %s", len(lateFailure), lateFailure[0])
	}
	if len(acked) < 20 {
		t.Fatalf("only %d orders acknowledged: the load did not run", len(acked))
	}
	// Every acknowledged order is stored: read the customer's whole list through the balancer.
	stored := map[int64]bool{}
	size := ordersapi.Size(100)
	for page := ordersapi.Page(0); ; page++ {
		r, err := customer.api.ListUserOrdersWithResponse(context.Background(), customer.Id, &ordersapi.ListUserOrdersParams{Page: &page, Size: &size})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("list page %d: %v", page, err)
		}
		for _, o := range r.JSON200.Content {
			stored[o.Id] = true
		}
		if len(r.JSON200.Content) < int(size) {
			break
		}
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("order %d was acknowledged with 201 but is not stored", id)
		}
	}
	t.Logf("%d orders acknowledged, %d stored, one replica killed mid-load", len(acked), len(stored))
}

// TestReplicas_ConfirmationSingleUse sends a verified-login confirmation through a real SMTP server,
// uses it once through the balancer, and replays it at every replica: each refuses it.
func TestReplicas_ConfirmationSingleUse(t *testing.T) {
	t.Parallel()
	mail := smtptest.Start(t, smtptest.Options{})
	c := startCluster(t, 3, "-auth-smtp-host", mail.Host, "-auth-smtp-port", strconv.Itoa(mail.Port),
		"-auth-smtp-starttls=false", "-auth-smtp-from", "triad <noreply@example.com>")
	hc := httpClient(t, loadSpec(t, auth))
	get := func(base, path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := get(c.lb.URL, "/auth/email/login?user=alice&address=alice@example.com&aud=triad"); st != 200 {
		t.Fatalf("send: %d %s", st, b)
	}
	msgs := mail.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages delivered, want 1", len(msgs))
	}
	msg, err := netmail.ReadMessage(strings.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(msg.Body))
	m := regexp.MustCompile(`<pre>([A-Za-z0-9_\-.]+)</pre>`).FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no confirmation token in:\n%s", body)
	}
	if st, b := get(c.lb.URL, "/auth/email/login?token="+m[1]); st != 200 {
		t.Fatalf("confirm through the balancer: %d %s", st, b)
	}
	for i, node := range c.nodes {
		if st, b := get(node.URL, "/auth/email/login?token="+m[1]); st != 403 || !strings.Contains(b, "confirmation_used") {
			t.Errorf("replay at replica %d: %d %s; want 403 confirmation_used", i+1, st, b)
		}
	}
}

// revocationDelay is how long a replica may still accept a revoked token: each caches resolved
// tokens, but drops one as soon as PostgreSQL notifies its row's deletion (docs/replicas.md), which
// takes milliseconds; the bound allows for a loaded machine (2 s, stretched with the load by
// patience.Bound). A replica that waited for its cache entry to age out (a minute) fails.
var revocationDelay = patience.Bound(2 * time.Second)

// TestReplicas_RevokedTokenRefusedByAll warms every replica's token cache with an orders token,
// deletes the token's row (what revocation is), and waits for every replica to refuse it.
func TestReplicas_RevokedTokenRefusedByAll(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	e := newOrdersEnvAt(t, c.lb.URL)
	user := e.signUp("replica-revoked", ordersapi.Customer)
	tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, "replica-revoked", "replica-revoked-password")
	if err != nil {
		t.Fatal(err)
	}
	status := func(base string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/authenticated", nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := e.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, node := range c.nodes {
		if st := status(node.URL); st != 200 {
			t.Fatalf("replica %d refused a fresh token: %d", i+1, st)
		}
	}
	db, err := pgx.Connect(context.Background(), c.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if tag, err := db.Exec(context.Background(), "DELETE FROM order_tokens WHERE user_id = $1", user.Id); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("revoking: %v (%d rows)", err, tag.RowsAffected())
	}
	revoked := time.Now()
	deadline := revoked.Add(revocationDelay)
	for i, node := range c.nodes {
		for status(node.URL) != 401 {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d still accepts the token %v after its row was deleted", i+1, time.Since(revoked).Round(time.Millisecond))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("every replica refused the revoked token within %v", time.Since(revoked).Round(time.Millisecond))
}

// TestReplicas_BrandsLogoutEverywhere signs the demo user in twice (two devices), warms every
// replica's token cache with both tokens, logs one out through the balancer, and waits for every
// replica to refuse both: a logout ends every token of the user (brands-api.md, rule 3), and each
// replica drops them when PostgreSQL notifies the deletion of their rows, within milliseconds
// (docs/brands.md).
func TestReplicas_BrandsLogoutEverywhere(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	hc := httpClient(t, loadSpec(t, brands))
	login := func() string {
		t.Helper()
		resp, err := hc.PostForm(c.lb.URL+"/api/user/login", url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}})
		if err != nil {
			t.Fatal(err)
		}
		var tok struct {
			Token string `json:"token"`
		}
		err = json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if err != nil || tok.Token == "" {
			t.Fatalf("login: %d %v", resp.StatusCode, err)
		}
		return tok.Token
	}
	phone, laptop := login(), login()
	me := func(base, tok string) int {
		t.Helper()
		resp, err := hc.Get(base + "/api/user/me?access_token=" + url.QueryEscape(tok))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, node := range c.nodes {
		for _, tok := range []string{phone, laptop} {
			if st := me(node.URL, tok); st != 200 {
				t.Fatalf("replica %d refused a fresh token: %d", i+1, st)
			}
		}
	}
	out, err := hc.Post(c.lb.URL+"/api/user/logout?access_token="+url.QueryEscape(phone), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if out.StatusCode != 200 {
		t.Fatalf("logout: %d", out.StatusCode)
	}
	loggedOut := time.Now()
	deadline := loggedOut.Add(revocationDelay)
	for i, node := range c.nodes {
		for _, tok := range []string{phone, laptop} {
			for st := me(node.URL, tok); st != 401; st = me(node.URL, tok) {
				if st != 200 || time.Now().After(deadline) {
					t.Fatalf("replica %d answered %d %v after the logout, want 401 within %v", i+1, st, time.Since(loggedOut).Round(time.Millisecond), revocationDelay)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	t.Logf("every replica refused both of the user's tokens within %v", time.Since(loggedOut).Round(time.Millisecond))
}

// TestReplicas_LoginThrottleShared spreads twelve wrong passwords for one account over the
// replicas, attempt i going to replica i mod 3 directly (not trusting the balancer's rotation, which
// a replica out of it would quietly reduce to fewer): each replica sees four, yet the 11th and 12th
// are refused with 429, as with one server.
func TestReplicas_LoginThrottleShared(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	hc := &http.Client{Timeout: 30 * time.Second}
	for _, tc := range []struct {
		name string
		try  func(base string) (*http.Response, error)
		fail int
	}{
		{"orders token endpoint", func(base string) (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodPost, base+"/oauth/token", strings.NewReader(url.Values{
				"grant_type": {"password"}, "username": {"alice"}, "password": {"not-alice-password"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(ordersClientID, ordersClientSecret)
			return hc.Do(req)
		}, 400},
		{"brands login", func(base string) (*http.Response, error) {
			return hc.PostForm(base+"/api/user/login", url.Values{"email": {"demo@brands.test"}, "password": {"wrong-password"}})
		}, 401},
	} {
		for i := 1; i <= 12; i++ {
			node := (i - 1) % len(c.nodes)
			resp, err := tc.try(c.nodes[node].URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := tc.fail
			if i > 10 {
				want = http.StatusTooManyRequests
			}
			if resp.StatusCode != want {
				t.Fatalf("%s: attempt %d (replica %d) answered %d, want %d", tc.name, i, node+1, resp.StatusCode, want)
			}
		}
	}
}
