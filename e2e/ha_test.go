//go:build ha

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/testkit/hastack"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// haRole is the row-only role the HA run's servers use.
const haRole = "triad_app"

// haFreeze is how long the frozen-primary fault stops the leader's PostgreSQL.
const haFreeze = 40 * time.Second

// haFault is one fault `make test-ha` injects, and the longest span of client errors it may cost.
type haFault struct {
	name             string
	limit            time.Duration
	readsMustNotFail bool // the standby or the primary serves every read throughout
	inject           func(ctx context.Context) error
	heal             func(ctx context.Context) error // back to a healthy cluster before the next fault
}

// TestHA_FailoverLosesNothing is `make test-ha` (docs/replicas.md, "High availability"): the HA
// stack (etcd, Patroni 4 over three PostgreSQL 15 nodes with quorum commit and failsafe_mode,
// HAProxy by Patroni's checks, PgBouncer with deploy/pgbouncer/pgbouncer.ini's settings, pgBackRest
// archiving), three prod servers as the row-only role with the pooled, multi-host direct and read
// URLs behind an HAProxy, a bounded mixed load through it (creates with Idempotency-Key and
// retries, list reads, logins), and each fault in turn: a leader crash (kill -9 of Patroni and the
// postmaster), a planned switchover, a fast restart of the primary, a PgBouncer restart, kill -9 of
// the leader's postmaster alone, a forced failover to a quorum standby, 2 of 3 etcd members stopped
// 30 s, a standby crashed and then the leader, every PostgreSQL process of the leader stopped 40 s.
// One line per fault:
//
//	failover: <fault>: errors for <X> s, acked <N>, stored <M>, lost <L>, reads failed <R>, balancer 503 <B>, ids reused <U>
//
// failing when anything acknowledged is lost or its id names another order, when the balancer
// answered a 503 of its own (no server in its rotation), when errors last longer than the fault's
// limit, or when a read fails while etcd has lost its majority. The planned ones run as an
// operator runs them, PgBouncer holding queries meanwhile (hastack.Switchover, RestartPrimary).
// After each promotion the archive is made whole. Then, after the frozen primary, a point-in-time
// restore as the runbook says (the leader's timeline from patronictl list) to a moment T in a
// stretch of load, into a scratch cluster: every create acknowledged before T is there and the
// ledger adds up.
func TestHA_FailoverLosesNothing(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "triad-ha-")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("TRIAD_HA_KEEP") == "" { // set, the stack's folder (logs, archive) stays for a look
		t.Cleanup(func() { os.RemoveAll(dir) })
	} else {
		t.Logf("the stack's folder: %s (kept: TRIAD_HA_KEEP)", dir)
	}
	settings, err := hastack.BouncerSettings(filepath.Join(repoRoot, "deploy", "pgbouncer", "pgbouncer.ini"))
	if err != nil {
		t.Fatal(err)
	}
	dcs, err := hastack.PatroniDCS(filepath.Join(repoRoot, "deploy", "patroni", "patroni.yml"))
	if err != nil {
		t.Fatal(err)
	}
	startCtx, cancel := context.WithTimeout(ctx, patience.Bound(8*time.Minute))
	defer cancel()
	started := time.Now()
	st, err := hastack.Start(startCtx, dir, hastack.Options{AppRole: haRole, BouncerSettings: settings,
		Patroni: filepath.Join(repoRoot, "var", "patroni", "bin"), DCS: dcs,
		Log: func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack logs:\n%s", st.Logs())
		}
		st.Stop()
	})
	migrate := exec.CommandContext(startCtx, serverBin, "-mode", "migrate")
	migrate.Env = append(os.Environ(), "DATABASE_URL=", "DATABASE_DIRECT_URL="+st.OwnerURL(), "DB_APP_ROLE="+haRole)
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("server -mode migrate: %v\n%s", err, out)
	}
	tg := providertest.NewTelegram(t, "778:ha-bot", "triad_ha_bot")
	args := []string{"-mode", "prod", "-auth-secret", "ha-test-secret-0123456789abcdef-0123",
		"-database-direct-url", st.DirectURL(haRole), "-database-read-url", st.ReadURL(haRole),
		"-auth-telegram-token", tg.Token, "-auth-telegram-api-url", tg.URL(), "-auth-providers-allow-private"}
	nodes := make([]*server, 3)
	var backends []string
	for i := range nodes {
		nodes[i] = launchRetrying(t, launchOpts{dbURL: st.PooledURL(haRole), args: args})
		waitReady(t, nodes[i].URL+"/readyz")
		backends = append(backends, strings.TrimPrefix(nodes[i].URL, "http://"))
	}
	if os.Getenv("TRIAD_HA_KEEP") != "" {
		t.Cleanup(func() {
			for i, n := range nodes {
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("server%d.log", i)), []byte(n.log.String()), 0o644)
			}
		})
	}
	front, err := hastack.StartFront(startCtx, dir, 0, backends)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(front.Stop)
	t.Logf("the stack and 3 servers behind a balancer are up in %v", time.Since(started).Round(time.Second))

	e := newOrdersEnvAt(t, front.URL)
	customer := e.signUp("ha-customer", ordersapi.Customer)
	ld := newHALoad(t, front.URL, customer.Id, uniqueName("ha-customer"))
	owner, err := pgx.Connect(ctx, st.OwnerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { owner.Close(context.Background()) }()

	// After a promotion the archive is made whole before the next fault (the restore drill
	// crosses every timeline): see hastack.CompleteArchive. After the crash one segment of the old
	// timeline is first dropped from the archive, the gap a primary that dies before archiving
	// leaves, so that closing it is tested every run (the drill needs that segment).
	completeArchive := func(ctx context.Context, gap bool) error {
		dropped := ""
		if gap {
			var err error
			if dropped, err = st.DropArchivedBeforeBranch(ctx); err != nil {
				return err
			}
		}
		pushed, err := st.CompleteArchive(ctx)
		t.Logf("archive complete on the new timeline (dropped from it: %q; the new primary pushed for the old timeline: %v)", dropped, pushed)
		if err == nil && dropped != "" && !slices.Contains(pushed, dropped) {
			err = fmt.Errorf("segment %s, dropped from the archive, was not pushed again (pushed %v)", dropped, pushed)
		}
		return err
	}
	lease, err := st.LeaderTTL()
	if err != nil {
		t.Fatal(err)
	}
	var crashed []int
	restartCrashed := func(ctx context.Context) error {
		for _, i := range crashed {
			if err := st.RestartNode(i); err != nil {
				return err
			}
		}
		return nil
	}
	healPromotion := func(ctx context.Context) error {
		if err := st.WaitHealthy(ctx); err != nil {
			return err
		}
		return completeArchive(ctx, false)
	}
	faults := []haFault{
		// A lost machine's leader key outlives it by Patroni's lease (ttl: Patroni 4 refuses one
		// under 20 s), then the promotion: 10 s on top of the lease.
		{name: "leader crash", limit: lease + 10*time.Second,
			inject: func(ctx context.Context) error {
				i, err := st.KillLeader(ctx)
				crashed = []int{i}
				return err
			},
			heal: func(ctx context.Context) error {
				if err := restartCrashed(ctx); err != nil {
					return err
				}
				if err := st.WaitHealthy(ctx); err != nil {
					return err
				}
				return completeArchive(ctx, true)
			}},
		{name: "switchover", limit: 2 * time.Second, inject: st.Switchover, heal: healPromotion},
		{name: "primary restart", limit: 2 * time.Second, inject: st.RestartPrimary, heal: st.WaitHealthy},
		{name: "pgbouncer restart", limit: 2 * time.Second, inject: func(ctx context.Context) error { return st.Bouncer().Restart(ctx) }},
		{name: "postmaster kill", limit: 10 * time.Second,
			inject: func(ctx context.Context) error { _, err := st.KillPostmaster(ctx); return err }, heal: healPromotion},
		{name: "forced failover", limit: 10 * time.Second,
			inject: func(ctx context.Context) error { _, err := st.ForcedFailover(ctx); return err }, heal: healPromotion},
		{name: "etcd majority loss", limit: 10 * time.Second, readsMustNotFail: true,
			inject: func(ctx context.Context) error { return st.StopEtcdMajority(ctx, 30*time.Second) }, heal: st.WaitHealthy},
		{name: "standby then leader", limit: lease + 10*time.Second,
			inject: func(ctx context.Context) (err error) {
				crashed, err = st.StandbyThenLeader(ctx, 10*time.Second)
				return err
			},
			heal: func(ctx context.Context) error {
				if err := restartCrashed(ctx); err != nil {
					return err
				}
				return healPromotion(ctx)
			}},
		// Last: the restore drill below follows the runbook after it (a discarded timeline).
		{name: "frozen primary", limit: haFreeze + 10*time.Second,
			inject: func(ctx context.Context) error { _, err := st.FreezePrimary(ctx, haFreeze); return err }, heal: healPromotion},
	}
	for _, f := range faults {
		r := ld.run(ctx, f.inject)
		stored, reused, err := checkAcked(ctx, owner, r.acked)
		if err != nil {
			// The owner's session may have been on the old primary: once more, reconnected.
			owner.Close(ctx)
			if owner, err = pgx.Connect(ctx, st.OwnerURL()); err != nil {
				t.Fatal(err)
			}
			if stored, reused, err = checkAcked(ctx, owner, r.acked); err != nil {
				t.Fatal(err)
			}
		}
		lost := len(r.acked) - stored
		fmt.Printf("failover: %s: errors for %.1f s, acked %d, stored %d, lost %d, reads failed %d, balancer 503 %d, ids reused %d\n",
			f.name, r.errors.Seconds(), len(r.acked), stored, lost, r.readsFailed, r.balancer503, reused)
		t.Logf("%s: %d requests, %d failed (%d of them the balancer's own 503: no server up); fault at %s, errors from %s to %s (first %v after the fault); %s; a failed read: %s",
			f.name, r.requests, r.failed, r.balancer503, clock(r.faultAt), clock(r.errorSpan[0]), clock(r.errorSpan[1]),
			r.firstError.Round(time.Millisecond), r.sample, r.readSample)
		if lost > 0 {
			t.Errorf("%s: %d acknowledged creates are not stored", f.name, lost)
		}
		if reused > 0 {
			t.Errorf("%s: %d acknowledged ids name another order now", f.name, reused)
		}
		if r.balancer503 > 0 {
			t.Errorf("%s: the balancer answered %d bare 503s (no server in its rotation)", f.name, r.balancer503)
		}
		if f.readsMustNotFail && r.readsFailed > 0 {
			t.Errorf("%s: %d reads failed, want 0", f.name, r.readsFailed)
		}
		if r.errors > f.limit {
			t.Errorf("%s: clients saw errors for %v, want at most %v", f.name, r.errors.Round(100*time.Millisecond), f.limit)
		}
		if len(r.acked) == 0 {
			t.Errorf("%s: no create acknowledged: the load did not run", f.name)
		}
		if f.heal != nil {
			hctx, cancel := context.WithTimeout(ctx, patience.Bound(3*time.Minute))
			err := f.heal(hctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: healing: %v", f.name, err)
			}
		}
	}
	for i, n := range nodes {
		for _, bad := range []string{"prepared statement", "not held by its own session", "panic"} {
			if strings.Contains(n.log.String(), bad) {
				t.Errorf("server %d logged %q", i+1, bad)
			}
		}
	}

	// The restore drill's T: in a stretch of load after the last fault, so recovery crosses every
	// timeline the faults made and stops among commits.
	var restoreTarget time.Time
	if r := ld.run(ctx, func(context.Context) error { restoreTarget = time.Now(); return nil }); len(r.acked) == 0 || r.failed > 0 {
		t.Fatalf("the load after the faults: %d acknowledged, %d failed (%s)", len(r.acked), r.failed, r.sample)
	}
	restoreDrill(t, st, ld, restoreTarget)
}

// clock is t's UTC time of day to the millisecond, as the stack's logs print it.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05.000")
}

// restoreDrill restores the archive to target into a scratch cluster and checks that every create
// acknowledged before target is there and that the ledger adds up.
func restoreDrill(t *testing.T, st *hastack.Stack, ld *haLoad, target time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(5*time.Minute))
	defer cancel()
	if err := st.ArchiveNow(ctx); err != nil {
		t.Fatal(err)
	}
	// The runbook's steps (docs/operations.md, "Restore to a point in time"): the timeline from
	// `patronictl list`, then pgBackRest's restore along it into a scratch folder.
	timeline, err := st.LeaderTimeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.RestoreTo(ctx, target, timeline)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	conn, err := pgx.Connect(ctx, r.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	before := ld.ackedBefore(target)
	restored, reused, err := checkAcked(ctx, conn, before)
	if err != nil {
		t.Fatal(err)
	}
	if reused > 0 {
		t.Errorf("restore to %v: %d acknowledged ids name another order", target, reused)
	}
	fmt.Printf("restore: to %s: acked before T %d, restored %d, lost %d\n", target.UTC().Format(time.RFC3339Nano), len(before), restored, len(before)-restored)
	if restored != len(before) || len(before) == 0 {
		t.Errorf("restore to %v: %d creates acknowledged before it, %d restored", target, len(before), restored)
	}
	var negative, mismatched, total, grants, platform, commissions int64
	err = conn.QueryRow(ctx, `
		SELECT
		  (SELECT count(*) FROM order_users WHERE balance < 0),
		  (SELECT count(*) FROM order_users u WHERE u.balance <> (SELECT coalesce(sum(amount), 0) FROM order_ledger l WHERE l.user_id = u.id)),
		  (SELECT coalesce(sum(balance), 0) FROM order_users) + (SELECT coalesce(sum(balance), 0) FROM order_platform_slots),
		  (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE kind = 'grant'),
		  (SELECT coalesce(sum(balance), 0) FROM order_platform_slots),
		  (SELECT coalesce(sum(amount), 0) FROM order_ledger WHERE kind = 'commission')`).
		Scan(&negative, &mismatched, &total, &grants, &platform, &commissions)
	if err != nil {
		t.Fatal(err)
	}
	if negative != 0 || mismatched != 0 || total != grants || platform != commissions {
		t.Errorf("the restored ledger does not add up: negative=%d mismatched=%d balances+platform=%d grants=%d platform=%d commissions=%d",
			negative, mismatched, total, grants, platform, commissions)
	}
}

// checkAcked counts, of the acknowledged creates, those whose id the database behind conn has
// (stored), and of those the ones whose id now names another order (reused: its description is
// not the create's key).
func checkAcked(ctx context.Context, conn *pgx.Conn, acks []haAck) (stored, reused int, err error) {
	ids := make([]int64, len(acks))
	want := make(map[int64]string, len(acks))
	for i, a := range acks {
		ids[i], want[a.id] = a.id, a.key
	}
	rows, err := conn.Query(ctx, "SELECT id, description FROM orders WHERE id = ANY($1)", ids)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var description string
		if err := rows.Scan(&id, &description); err != nil {
			return 0, 0, err
		}
		stored++
		if description != want[id] {
			reused++
		}
	}
	return stored, reused, rows.Err()
}
