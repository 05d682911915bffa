//go:build replicas

// The exactly-once tests start their own servers over one database (one is killed with SIGKILL;
// clients speak from several loopback addresses), so they run in `make test-replicas` beside the
// other tests of several servers, once, rather than again in the race run of every package.

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// answer is one response, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// keyedPost sends a JSON POST with an Idempotency-Key and, when authz is not "", that
// Authorization header.
func keyedPost(hc *http.Client, url, authz, key, body string) (answer, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.Header, key)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	res, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, header: res.Header, body: b}, err
}

// retryKeyed is keyedPost repeated, as a client told Retry-After, while the key's first request
// still holds it (409 idempotency_key_in_use), for at most limit.
func retryKeyed(t *testing.T, hc *http.Client, url, authz, key, body string, limit time.Duration) answer {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		a, err := keyedPost(hc, url, authz, key, body)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		if a.status != http.StatusConflict || !bytes.Contains(a.body, []byte(idempotency.CodeInUse)) || time.Now().After(deadline) {
			return a
		}
		time.Sleep(time.Second)
	}
}

// waitLog waits until s has logged a line containing text.
func waitLog(t *testing.T, s *server, text string) {
	t.Helper()
	deadline := time.Now().Add(patience.Bound(time.Minute))
	for !strings.Contains(s.log.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not log %q within a minute", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestExactlyOnce_CreateSurvivesAKilledServer: a customer's POST /orders with an Idempotency-Key
// reaches a server that is killed (SIGKILL) at a hold point, and the client retries the same
// request on another server over the same database:
//   - killed with the order and its answer written but not committed (in-tx): the retry runs the
//     create (not a replay) within seconds, not after a lease, and there is one order;
//   - killed after the commit, before the answer was sent (before-reply): the retry gets the kept
//     answer, replayed, and there is one order.
//
// A further retry replays in both cases, and so does one with the customer's second token,
// spelled "bearer  <token>".
func TestExactlyOnce_CreateSurvivesAKilledServer(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	victims := map[string]*server{}
	for _, point := range []string{idempotency.HoldInTx, idempotency.HoldBeforeReply} {
		victims[point] = launchRetrying(t, launchOpts{dbURL: dbURL, env: []string{"TRIAD_TEST_IDEMPOTENCY_HOLD=" + point}})
	}
	other := launchRetrying(t, launchOpts{dbURL: dbURL})
	waitReady(t, other.URL+"/readyz")
	e := newOrdersEnvAt(t, other.URL)
	e.signUp("exactly-once", ordersapi.Customer)
	tokens := make([]string, 2)
	for i := range tokens {
		tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, "exactly-once", "exactly-once-password")
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = tok.AccessToken
	}
	if tokens[0] == tokens[1] {
		t.Fatal("setup: two logins gave one token")
	}
	hc := apitest.Client(t, loadSpec(t, orders))
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	for _, point := range []string{idempotency.HoldInTx, idempotency.HoldBeforeReply} {
		victim := victims[point]
		waitReady(t, victim.URL+"/readyz")
		key := "exactly-once-" + point
		description := "exactly once, killed at " + point
		body := fmt.Sprintf(`{"description":%q,"price":"1.00"}`, description)
		authz := "Bearer " + tokens[0]

		// The first attempt: its server stops at the hold point and is killed there.
		lost := make(chan error, 1)
		go func() {
			_, err := keyedPost(&http.Client{}, victim.URL+"/orders", authz, key, body)
			lost <- err
		}()
		waitLog(t, victim, `msg="idempotency test hold" point=`+point)
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := <-lost; err == nil {
			t.Fatalf("%s: the first attempt got an answer from a killed server", point)
		}

		// The retry on the other server. The dead request's claim dies with its database session,
		// so the retry waits for no lease (the 30 s one this replaced): 10 s is a generous bound.
		start := time.Now()
		retry := retryKeyed(t, hc, other.URL+"/orders", authz, key, body, 10*time.Second)
		if took := time.Since(start); retry.status != http.StatusCreated || took > 10*time.Second {
			t.Fatalf("%s: the retry answered %d %s after %v, want 201 within 10 s", point, retry.status, retry.body, took)
		}
		replayed := retry.header.Get(idempotency.ReplayedHeader) == "true"
		if want := point == idempotency.HoldBeforeReply; replayed != want {
			t.Fatalf("%s: the retry was replayed: %v, want %v (the first attempt committed: %v)", point, replayed, want, want)
		}
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM orders WHERE description = $1", description).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%s: %d orders after the kill and the retry, want exactly 1", point, n)
		}

		// Further retries, with either token in any spelling of the scheme, get that answer.
		for _, authz := range []string{"Bearer " + tokens[0], "bearer  " + tokens[1]} {
			again, err := keyedPost(hc, other.URL+"/orders", authz, key, body)
			if err != nil {
				t.Fatal(err)
			}
			if again.status != http.StatusCreated || !bytes.Equal(again.body, retry.body) || again.header.Get(idempotency.ReplayedHeader) != "true" {
				t.Fatalf("%s: a further retry answered %d %s (replayed %q), want the retry's answer %s",
					point, again.status, again.body, again.header.Get(idempotency.ReplayedHeader), retry.body)
			}
		}
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM orders WHERE description = $1", description).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: %d orders after the replays (%v), want 1", point, n, err)
		}
	}
}

// TestExactlyOnce_AnonymousKeysPerClientAddress: a registration's key (POST /users needs no
// token) is its client address's: the same key from another address is another key, and an
// answer kept for one address is never served to another (the identical request from there runs,
// and is refused as a taken username), while the first address's retry replays.
func TestExactlyOnce_AnonymousKeysPerClientAddress(t *testing.T) {
	t.Parallel()
	s := launchRetrying(t, launchOpts{dbURL: dbtest.NewURL(t)})
	waitReady(t, s.URL+"/readyz")
	spec := loadSpec(t, orders)
	two, three := apitest.ClientFrom(t, spec, "127.0.0.2"), apitest.ClientFrom(t, spec, "127.0.0.3")
	register := func(hc *http.Client, key, username string) answer {
		t.Helper()
		a, err := keyedPost(hc, s.URL+"/users", "", key, fmt.Sprintf(`{"username":%q,"password":"anonymous-password","userType":"Customer"}`, username))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := register(two, "same-key", "anon-two")
	if first.status != http.StatusCreated {
		t.Fatalf("127.0.0.2: %d %s, want 201", first.status, first.body)
	}
	if a := register(three, "same-key", "anon-three"); a.status != http.StatusCreated || a.header.Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("127.0.0.3, the same key for another user: %d %s (replayed %q), want 201, not replayed (another address's key)",
			a.status, a.body, a.header.Get(idempotency.ReplayedHeader))
	}
	// A key 127.0.0.2 has an answer for, sent by 127.0.0.3 with the identical request: it runs
	// there (refused: the user exists), and 127.0.0.2's answer, its user, is not served to it.
	if a := register(two, "shared-key", "anon-shared"); a.status != http.StatusCreated {
		t.Fatalf("127.0.0.2: %d %s, want 201", a.status, a.body)
	}
	if a := register(three, "shared-key", "anon-shared"); a.status != http.StatusConflict ||
		!bytes.Contains(a.body, []byte("username_taken")) || a.header.Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("127.0.0.3 sending 127.0.0.2's request and key: %d %s, want 409 username_taken, not a replay", a.status, a.body)
	}
	again := register(two, "same-key", "anon-two")
	if again.status != http.StatusCreated || !bytes.Equal(again.body, first.body) || again.header.Get(idempotency.ReplayedHeader) != "true" {
		t.Fatalf("127.0.0.2's retry: %d %s (replayed %q), want its first answer %s", again.status, again.body, again.header.Get(idempotency.ReplayedHeader), first.body)
	}
}
