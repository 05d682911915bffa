package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/opaquetoken/watchertest"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/surfaces/orders/httpapi"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	testClientID     = "test-client"
	testClientSecret = "test-client-secret"
)

// hasher is shared so that parallel tests together respect its cap on concurrent argon2 work.
// It hashes with password.Fast: these tests hold the HTTP translation, not argon2id's cost (the
// password package holds password.Default; a Default hash costs most of a second under -race).
var (
	hasherOnce sync.Once
	hasher     *password.Hasher
)

func sharedHasher() *password.Hasher {
	// A deep queue: the race tests send dozens of registrations at once and test the domain, not
	// shedding (TestHasherBusy does that with a hasher of its own).
	hasherOnce.Do(func() { hasher = password.NewSized(password.Fast, 2, 1024) })
	return hasher
}

// env is one orders API on its own database, reached over a real socket by a client that
// validates every response against api/orders.yaml.
type env struct {
	t    testing.TB
	url  string
	c    *http.Client
	pool *pgxpool.Pool
}

// fullSpec is api/orders.yaml as published. The generated package's embedded copy leaves out the
// hand-written token endpoint, so responses are validated against the file itself.
func fullSpec(t testing.TB) *openapi3.T {
	t.Helper()
	return apitest.Spec(t, "orders.yaml")
}

func newEnv(t testing.TB, ttl time.Duration) *env {
	t.Helper()
	return newEnvLogins(t, ttl, throttle.Options{})
}

// newEnvLogins is newEnv with the login limiter's options (a test clock).
func newEnvLogins(t testing.TB, ttl time.Duration, logins throttle.Options) *env {
	t.Helper()
	return newEnvPool(t, dbtest.New(t), ttl, logins)
}

// newEnvPool is newEnvLogins on a given pool (one with an outage switch, or shared by a twin).
func newEnvPool(t testing.TB, pool *pgxpool.Pool, ttl time.Duration, logins throttle.Options) *env {
	t.Helper()
	return newEnvHasher(t, pool, ttl, logins, sharedHasher())
}

// newEnvHasher is newEnvPool with its own password hasher (a small one, to fill it).
func newEnvHasher(t testing.TB, pool *pgxpool.Pool, ttl time.Duration, logins throttle.Options, hasher *password.Hasher) *env {
	t.Helper()
	return newEnvWith(t, pool, httpapi.Options{Options: tokenedge.Options{TokenTTL: ttl, Hasher: hasher, Logins: logins}})
}

// newEnvLimits is newEnv with limits on what one user may hold.
func newEnvLimits(t testing.TB, limits orders.Limits) *env {
	t.Helper()
	return newEnvWith(t, nil, withLimits(limits))
}

// withLimits is the options of newEnv with limits.
func withLimits(limits orders.Limits) httpapi.Options {
	return httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, Hasher: sharedHasher()}, Limits: limits}
}

// newEnvWith is the API with opts (the test client's id and secret, a log and a token Watcher
// added) on pool (nil: a database of its own), its handler wrapped in wrap (the server's own
// layers a test needs, outermost first). Without a hasher it gets the shared one; without a
// registration cap, one no test reaches: tests register many users from one address, and the cap
// is tested on its own (TestRegister_CappedPerAddress, with the server's default).
func newEnvWith(t testing.TB, pool *pgxpool.Pool, opts httpapi.Options, wrap ...func(http.Handler) http.Handler) *env {
	t.Helper()
	if pool == nil {
		pool = dbtest.New(t)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// As in the server: resolved tokens are cached, and revocations reach the cache by a Watcher.
	w := opaquetoken.NewWatcher(pool, log)
	opts.ClientID, opts.ClientSecret, opts.Log, opts.Revocations = testClientID, testClientSecret, log, w
	if opts.Hasher == nil {
		opts.Hasher = sharedHasher()
	}
	if opts.Signups.Max == 0 {
		opts.Signups.Max = 1 << 20
	}
	// Likewise the write share: the race tests send one user's writes 20 at once, and the share
	// is tested on its own (TestWriteShare_OneUsersFloodLeavesThePoolToOthers, a share of 1).
	if opts.Limits.WriteShare == 0 {
		opts.Limits.WriteShare = 64
	}
	a, err := httpapi.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	watchertest.Run(t, w)
	h, err := router.Standalone(log, a.Mount)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(wrap) - 1; i >= 0; i-- {
		h = wrap[i](h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	spec := fullSpec(t)
	c := apitest.Client(t, spec)
	// Many goroutines of the race tests share the client.
	c.Transport = apitest.NewValidator(t, spec).Transport(t, &http.Transport{MaxIdleConnsPerHost: 128})
	return &env{t: t, url: srv.URL, c: c, pool: pool}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// errCode is the code of an Error body.
func (r resp) errCode(t testing.TB) string {
	t.Helper()
	var e ordersapi.Error
	r.decode(t, &e)
	return e.Code
}

// do sends a request; body may be nil, a string (sent raw as JSON) or a value to encode.
func (e *env) do(method, path, token string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) want(r resp, status int) {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
}

// register creates a user through POST /users.
func (e *env) register(name, pw, userType string) ordersapi.User {
	e.t.Helper()
	r := e.do("POST", "/users", "", map[string]string{"username": name, "password": pw, "userType": userType})
	e.want(r, http.StatusCreated)
	var u ordersapi.User
	r.decode(e.t, &u)
	return u
}

// login gets a token the way the original API's clients did: every parameter in the query.
func (e *env) login(name, pw string) string {
	e.t.Helper()
	q := url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"username": {name}, "password": {pw}}
	req, _ := http.NewRequest("POST", e.url+"/oauth/token?"+q.Encode(), nil)
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		e.t.Fatalf("login %s: %d %s", name, res.StatusCode, b)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil {
		e.t.Fatal(err)
	}
	return tok.AccessToken
}

// account is a registered, logged-in user.
type account struct {
	ordersapi.User
	token string
}

func (e *env) account(name, userType string) account {
	e.t.Helper()
	u := e.register(name, name+"-password", userType)
	return account{User: u, token: e.login(name, name+"-password")}
}

// accounts registers and logs in n users named prefix0..prefixN-1 concurrently.
func (e *env) accounts(prefix, userType string, n int) []account {
	e.t.Helper()
	out := make([]account, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = e.account(fmt.Sprintf("%s%d", prefix, i), userType) })
	}
	wg.Wait()
	return out
}

func (e *env) createOrder(c account, description, price string) ordersapi.Order {
	e.t.Helper()
	r := e.do("POST", "/orders", c.token, fmt.Sprintf(`{"description":%q,"price":%s}`, description, price))
	e.want(r, http.StatusCreated)
	var o ordersapi.Order
	r.decode(e.t, &o)
	return o
}

func (e *env) transition(a account, id int64, action string) resp {
	e.t.Helper()
	return e.do("PATCH", fmt.Sprintf("/orders/%d/%s", id, action), a.token, nil)
}

// complete takes, passes (p) and accepts (c) the waiting order id: the customer pays.
func (e *env) complete(c, p account, id int64) {
	e.t.Helper()
	e.want(e.transition(p, id, "take"), http.StatusOK)
	e.want(e.transition(p, id, "pass"), http.StatusOK)
	e.want(e.transition(c, id, "accept"), http.StatusOK)
}

// readyOrder takes a new order of c through take and pass by p.
func (e *env) readyOrder(c, p account, price string) ordersapi.Order {
	e.t.Helper()
	o := e.createOrder(c, "work", price)
	e.want(e.transition(p, o.Id, "take"), http.StatusOK)
	e.want(e.transition(p, o.Id, "pass"), http.StatusOK)
	return o
}

// fund grants a user rubles more (a ledger grant, as at registration), for tests of prices
// beyond a starting balance.
func (e *env) fund(a account, rubles int64) {
	e.t.Helper()
	_, err := e.pool.Exec(context.Background(), `
		WITH u AS (UPDATE order_users SET balance = balance + $2 WHERE id = $1 RETURNING id)
		INSERT INTO order_ledger (user_id, kind, amount) SELECT id, 'grant', $2 FROM u`, a.Id, rubles*100)
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) balance(a account) string {
	e.t.Helper()
	r := e.do("GET", "/authenticated", a.token, nil)
	e.want(r, http.StatusOK)
	var u ordersapi.User
	r.decode(e.t, &u)
	return u.Balance.String()
}

// checkLedger asserts the money invariants straight from the database: no negative balance, each
// user's balance equals the sum of the user's ledger rows, the platform's the sum of commissions,
// and balances plus platform revenue equal the grants. It also checks the list counters against
// real counts.
func (e *env) checkLedger() {
	e.t.Helper()
	ctx := context.Background()
	var negative, mismatched int64
	var total, grants, platform, commissions int64
	err := e.pool.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM order_users WHERE balance < 0),
		  (SELECT count(*) FROM order_users u WHERE u.balance <> (SELECT coalesce(sum(amount), 0) FROM order_ledger l WHERE l.user_id = u.id)),
		  (SELECT coalesce(sum(balance), 0) FROM order_users) + (SELECT sum(balance) FROM order_platform_slots),
		  (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE kind = 'grant'),
		  (SELECT sum(balance) FROM order_platform_slots),
		  (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE kind = 'commission')`).
		Scan(&negative, &mismatched, &total, &grants, &platform, &commissions)
	if err != nil {
		e.t.Fatal(err)
	}
	if negative != 0 || mismatched != 0 || total != grants || platform != commissions {
		e.t.Fatalf("ledger invariant broken: negative=%d mismatched=%d balances+platform=%d grants=%d platform=%d commissions=%d",
			negative, mismatched, total, grants, platform, commissions)
	}
	var badCounters int64
	err = e.pool.QueryRow(ctx, `
		SELECT count(*) FROM (
		  SELECT 'waiting' AS scope, 0::bigint AS owner_id, count(*) AS n FROM orders WHERE status = 'WAITING'
		  UNION ALL SELECT 'customer', customer_id, count(*) FROM orders GROUP BY customer_id
		  UNION ALL SELECT 'performer', performer_id, count(*) FROM orders WHERE performer_id IS NOT NULL GROUP BY performer_id
		) real FULL JOIN order_list_sizes c USING (scope, owner_id)
		WHERE coalesce(real.n, 0) <> coalesce(c.n, 0)`).Scan(&badCounters)
	if err != nil {
		e.t.Fatal(err)
	}
	if badCounters != 0 {
		e.t.Fatalf("%d list counters differ from the real counts", badCounters)
	}
	// What a customer has reserved is what its open orders hold, and no more than its balance;
	// what a performer holds (IN PROGRESS and READY) is counted exactly.
	var badReserved, badHolding int64
	err = e.pool.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM order_users u WHERE u.reserved > u.balance OR u.reserved <> (SELECT coalesce(sum(held), 0)
		     FROM orders o WHERE o.customer_id = u.id AND o.status IN ('WAITING', 'IN PROGRESS', 'READY'))),
		  (SELECT count(*) FROM order_users u WHERE u.holding <> (SELECT count(*)
		     FROM orders o WHERE o.performer_id = u.id AND o.status IN ('IN PROGRESS', 'READY')))`).Scan(&badReserved, &badHolding)
	if err != nil {
		e.t.Fatal(err)
	}
	if badReserved != 0 || badHolding != 0 {
		e.t.Fatalf("%d customers' reservations and %d performers' held counts differ from their orders", badReserved, badHolding)
	}
}
