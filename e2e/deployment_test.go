//go:build replicas

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// appRole is the role the deployment's servers run as: it may read and write rows, nothing else.
const appRole = "triad_app"

// deployment is the topology of a deployment that outgrew one database server's connections: a
// PostgreSQL primary, a streaming standby made by `pg_basebackup -R`, Debian's PgBouncer in
// transaction mode (default settings) in front of the primary, the schema applied by
// `server -mode migrate` as the owner, and prod-mode replicas running as appRole with the three
// URLs (DATABASE_URL: the pooler; DATABASE_DIRECT_URL: the primary; DATABASE_READ_URL: the standby).
type deployment struct {
	nodes []*server
	owner string // the primary's database as its owner, for the test's own reads and deletes
	tg    *providertest.Telegram
}

// withUser is the URL u with user.
func withUser(t *testing.T, u, user string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.User(user)
	return p.String()
}

func startDeployment(t *testing.T, n int) *deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(2*time.Minute))
	defer cancel()
	// Under /tmp: PostgreSQL and PgBouncer run as the postgres user when the tests run as root,
	// and unix socket paths must stay short.
	dir, err := os.MkdirTemp("", "triad-deploy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	primary, err := pgcluster.Start(ctx, filepath.Join(dir, "p"), pgcluster.Options{Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop() })
	admin, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	// The ephemeral cluster would acknowledge commits before writing their WAL, which a standby
	// receives only once written: commits wait for it, as on a durable primary.
	for _, sql := range []string{"ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()",
		"CREATE DATABASE triad", "CREATE ROLE " + appRole + " LOGIN"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	admin.Close(ctx)
	standby, err := pgcluster.Start(ctx, filepath.Join(dir, "s"), pgcluster.Options{StandbyOf: primary.URL("postgres")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop() })
	bouncer, err := pgcluster.StartBouncer(ctx, filepath.Join(dir, "b"), primary.URL("triad"), appRole)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bouncer.Stop()
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", bouncer.Log())
		}
	})

	owner := primary.URL("triad")
	migrate := exec.CommandContext(ctx, serverBin, "-mode", "migrate", "-db-app-role", appRole)
	migrate.Env = append(os.Environ(), "DATABASE_URL="+owner)
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("server -mode migrate: %v\n%s", err, out)
	}

	d := &deployment{owner: owner, nodes: make([]*server, n), tg: providertest.NewTelegram(t, "777:deployment-bot", "triad_deploy_bot")}
	args := []string{"-mode", "prod", "-auth-secret", "deployment-test-secret-0123456789abcdef",
		"-database-direct-url", withUser(t, owner, appRole),
		"-database-read-url", withUser(t, standby.URL("triad"), appRole),
		// The stand-in Bot API listens on loopback, which the guarded outbound client refuses
		// unless the operator allows private provider addresses.
		"-auth-telegram-token", d.tg.Token, "-auth-telegram-api-url", d.tg.URL(), "-auth-providers-allow-private"}
	pooled := bouncer.URL(appRole, "triad")
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.nodes[i] = launchRetrying(t, launchOpts{dbURL: pooled, args: args})
		}()
	}
	wg.Wait()
	for _, node := range d.nodes {
		if node == nil {
			t.FailNow()
		}
		waitReady(t, node.URL+"/readyz")
	}
	return d
}

// standbyReads sums triad_db_reads_total{db="standby"} over the nodes' /metrics.
func (d *deployment) standbyReads(t *testing.T) (n int64) {
	t.Helper()
	for _, node := range d.nodes {
		resp, err := http.Get(node.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), `triad_db_reads_total{db="standby"} `); ok {
				f, _ := strconv.ParseFloat(v, 64)
				n += int64(f)
			}
		}
		resp.Body.Close()
	}
	return n
}

// refusedEverywhere polls status on every node until each answers 401, failing the test when one
// still does not after within; it returns how long the slowest took.
func refusedEverywhere(t *testing.T, nodes []*server, within time.Duration, status func(base string) int) time.Duration {
	t.Helper()
	start := time.Now()
	for i, node := range nodes {
		for st := status(node.URL); st != http.StatusUnauthorized; st = status(node.URL) {
			if st != http.StatusOK || time.Since(start) > within {
				t.Fatalf("replica %d answered %d %v after the revocation, want 401 within %v", i+1, st, time.Since(start).Round(time.Millisecond), within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// TestDeployment_PoolerStandbyMigrateRowRole runs the deployment of docs/replicas.md ("Behind a
// pooler, with read replicas") with three prod replicas and checks: all ready; a user made on one
// replica signs in and orders on another and sees the order at once on the third (whose list reads
// the standby); list reads reach the standby; a brands logout and an orders token-row deletion are
// refused by every replica within 1 s; one Telegram leader among the three.
func TestDeployment_PoolerStandbyMigrateRowRole(t *testing.T) {
	t.Parallel()
	d := startDeployment(t, 3)
	ctx := context.Background()
	a, b, c := newOrdersEnvAt(t, d.nodes[0].URL), newOrdersEnvAt(t, d.nodes[1].URL), newOrdersEnvAt(t, d.nodes[2].URL)

	// Made on one, signed in and ordering on another, listing on the third.
	reg, err := a.anon.RegisterOrdersUserWithResponse(ctx, nil, ordersapi.RegisterOrdersUserJSONRequestBody{
		Username: "deployed", Password: "deployed-password", UserType: ordersapi.Customer})
	if err != nil || reg.JSON201 == nil {
		t.Fatalf("register on replica 1: %v %s", err, reg.Body)
	}
	tok, err := b.oauth.PasswordCredentialsToken(b.ctxTok, "deployed", "deployed-password")
	if err != nil {
		t.Fatalf("sign-in on replica 2: %v", err)
	}
	onB, err := ordersapi.NewClientWithResponses(b.base, ordersapi.WithHTTPClient(b.oauth.Client(b.ctxTok, tok)))
	if err != nil {
		t.Fatal(err)
	}
	onC, err := ordersapi.NewClientWithResponses(c.base, ordersapi.WithHTTPClient(c.oauth.Client(c.ctxTok, tok)))
	if err != nil {
		t.Fatal(err)
	}
	readsBefore := d.standbyReads(t)
	for i := range 10 {
		made, err := onB.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: fmt.Sprintf("deployed job %d", i), Price: "12.50"})
		if err != nil || made.JSON201 == nil {
			t.Fatalf("order on replica 2: %v %s", err, made.Body)
		}
		list, err := onC.ListUserOrdersWithResponse(ctx, reg.JSON201.Id, nil)
		if err != nil || list.JSON200 == nil {
			t.Fatalf("list on replica 3: %v %s", err, list.Body)
		}
		seen := false
		for _, o := range list.JSON200.Content {
			seen = seen || o.Id == made.JSON201.Id
		}
		if n := len(list.JSON200.Content); n != i+1 || !seen {
			t.Fatalf("right after ordering on replica 2, replica 3 lists %d orders (the new one %d among them: %v), want %d", n, made.JSON201.Id, seen, i+1)
		}
	}
	if reads := d.standbyReads(t) - readsBefore; reads == 0 {
		t.Fatal("no list read reached the standby")
	} else {
		t.Logf("the standby served %d list reads in the 10 rounds of ordering on one replica and listing on another at once", reads)
	}

	// An orders token-row deletion, refused by every replica within 1 s.
	orders := func(base string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/authenticated", nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, node := range d.nodes {
		if st := orders(node.URL); st != http.StatusOK {
			t.Fatalf("replica %d refused a fresh orders token: %d", i+1, st)
		}
	}
	owner, err := pgx.Connect(ctx, d.owner)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	if tag, err := owner.Exec(ctx, "DELETE FROM order_tokens WHERE user_id = $1", reg.JSON201.Id); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("deleting the token rows: %v", err)
	}
	t.Logf("every replica refused the deleted orders token within %v", refusedEverywhere(t, d.nodes, time.Second, orders).Round(time.Millisecond))

	// A brands logout on one replica, refused by every replica within 1 s.
	resp, err := http.Post(d.nodes[0].URL+"/api/user/register", "application/json",
		strings.NewReader(`{"name":"Deployed","email":"deployed@example.com","password":"deployed-password"}`))
	if err != nil {
		t.Fatal(err)
	}
	var brandsUser struct{ Token string }
	_ = json.NewDecoder(resp.Body).Decode(&brandsUser)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || brandsUser.Token == "" {
		t.Fatalf("brands register: %d", resp.StatusCode)
	}
	me := func(base string) int {
		resp, err := http.Get(base + "/api/user/me?access_token=" + url.QueryEscape(brandsUser.Token))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, node := range d.nodes {
		if st := me(node.URL); st != http.StatusOK {
			t.Fatalf("replica %d refused a fresh brands token: %d", i+1, st)
		}
	}
	out, err := http.Post(d.nodes[0].URL+"/api/user/logout?access_token="+url.QueryEscape(brandsUser.Token), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if out.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", out.StatusCode)
	}
	t.Logf("every replica refused the logged-out brands token within %v", refusedEverywhere(t, d.nodes, time.Second, me).Round(time.Millisecond))

	// One Telegram leader, and it stays one.
	leaders := func() (n int) {
		for _, node := range d.nodes {
			if strings.Contains(node.log.String(), `"msg":"auth: elected leader"`) {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for leaders() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // two election rounds of the others (pgstate.DefaultLeaderInterval)
	if n := leaders(); n != 1 {
		t.Fatalf("%d replicas elected themselves Telegram leader, want 1", n)
	}
	for i, node := range d.nodes {
		log := node.log.String()
		for _, bad := range []string{"LISTEN hears nothing", "prepared statement", "not held by its own session"} {
			if strings.Contains(log, bad) {
				t.Errorf("replica %d logged %q:\n%s", i+1, bad, log)
			}
		}
	}
}
