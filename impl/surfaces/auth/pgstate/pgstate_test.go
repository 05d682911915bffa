package pgstate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// replicaPools returns n pools on one fresh database: n replicas of a server.
func replicaPools(t *testing.T, n int) []*pgxpool.Pool {
	t.Helper()
	url := dbtest.NewURL(t)
	var out []*pgxpool.Pool
	for range n {
		p, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		out = append(out, p)
	}
	return out
}

func newStore(t *testing.T, pool *pgxpool.Pool) *pgstate.Store {
	t.Helper()
	s, err := pgstate.New(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUsedIDs_OnceAcrossReplicas: of many uses of one id racing on two replicas, exactly one is
// the first; other ids are independent; an expired row is swept.
func TestUsedIDs_OnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	pools := replicaPools(t, 2)
	stores := []*pgstate.Store{newStore(t, pools[0]), newStore(t, pools[1])}
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	var mu sync.Mutex
	firsts := 0
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			first, err := stores[i%2].Use(ctx, "jti-1", exp)
			if err != nil {
				t.Error(err)
			}
			if first {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firsts != 1 {
		t.Fatalf("%d first uses of one id, want 1", firsts)
	}
	if first, err := stores[1].Use(ctx, "jti-2", exp); err != nil || !first {
		t.Fatalf("another id: %v %v", first, err)
	}
}

// TestNew_CreatesOnlyItsTables: on an empty database New creates its four tables and nothing else,
// and replicas starting together all succeed.
func TestNew_CreatesOnlyItsTables(t *testing.T) {
	t.Parallel()
	pools := replicaPools(t, 1)
	ctx := context.Background()
	if _, err := pools[0].Exec(ctx, "CREATE SCHEMA fresh"); err != nil {
		t.Fatal(err)
	}
	cfg := pools[0].Config().Copy()
	cfg.ConnConfig.RuntimeParams["search_path"] = "fresh"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			p, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Error(err)
				return
			}
			defer p.Close()
			if _, err := pgstate.New(ctx, p); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var tables []string
	rows, _ := pools[0].Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'fresh' ORDER BY 1")
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		tables = append(tables, n)
	}
	if rows.Err() != nil || !slices.Equal(tables, []string{"auth_revoked_sessions", "auth_telegram_logins", "auth_telegram_offsets", "auth_used_ids"}) {
		t.Fatalf("tables %v (%v)", tables, rows.Err())
	}
}

const botToken = "7000001:AAH-secret-bot-token_xyz"

// replica is one server instance's Telegram provider.
type replica struct {
	h    *provider.TelegramHandler
	jwt  *token.Service
	pool *pgxpool.Pool
}

func newReplica(t *testing.T, pool *pgxpool.Pool, fake *providertest.Telegram) *replica {
	t.Helper()
	return newReplicaWith(t, pool, fake, nil, nil)
}

// newReplicaWith is newReplica whose election is lead's wrapping of its pgstate.Leader (nil: the
// Leader as it is) and whose Bot API client is client (nil: the guarded one, loopback allowed).
func newReplicaWith(t *testing.T, pool *pgxpool.Pool, fake *providertest.Telegram,
	lead func(*pgstate.Leader) provider.Leader, client *http.Client) *replica {
	t.Helper()
	jwt := token.NewService(token.Opts{SecretReader: token.SecretFunc(func(string) (string, error) {
		return "secret-0123456789abcdef-0123456789", nil
	})})
	leader := pgstate.NewLeader(pool, "telegram:test")
	leader.Interval = 100 * time.Millisecond
	var elect provider.Leader = leader
	if lead != nil {
		elect = lead(leader)
	}
	if client == nil {
		client = outbound.New(outbound.Options{AllowPrivate: true})
	}
	store := newStore(t, pool)
	h, err := provider.NewTelegram(context.Background(), provider.Params{URL: "http://site.example", JwtService: jwt},
		provider.TelegramConfig{
			SuccessMsg: "logged in", ErrorMsg: "expired",
			Telegram: telegram.NewAPI(botToken, fake.URL(), client),
			PollWait: time.Second, Logins: store, Leader: elect, Offsets: store,
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return &replica{h: h, jwt: jwt, pool: pool}
}

func (r *replica) call(t *testing.T, q string) (int, []byte) {
	t.Helper()
	w := httptest.NewRecorder()
	r.h.LoginHandler(w, httptest.NewRequest(http.MethodGet, "/auth/telegram/login"+q, nil))
	return w.Code, w.Body.Bytes()
}

// start opens a login on r and returns its token.
func (r *replica) start(t *testing.T) string {
	t.Helper()
	st, b := r.call(t, "")
	var ls struct{ Token string }
	if st != http.StatusOK || json.Unmarshal(b, &ls) != nil || ls.Token == "" {
		t.Fatalf("start: %d %s", st, b)
	}
	return ls.Token
}

// complete polls r until the login tok is confirmed and returns the user, or fails after 15 s.
func (r *replica) complete(t *testing.T, tok string) token.User {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, b := r.call(t, "?token="+tok)
		if st == http.StatusOK {
			var u token.User
			if err := json.Unmarshal(b, &u); err != nil {
				t.Fatal(err)
			}
			return u
		}
		if st != http.StatusNotFound || time.Now().After(deadline) {
			t.Fatalf("complete: %d %s", st, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTelegram_TwoReplicasOnePoller: a login started on one replica is confirmed by whichever polls
// the bot and completes on the other; when the poller's replica dies, the other takes over.
func TestTelegram_TwoReplicasOnePoller(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, botToken, "triad_login_bot")
	pools := replicaPools(t, 2)
	a := newReplica(t, pools[0], fake)
	// a polls alone first, so it is the one elected.
	tok := a.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 10, FirstName: "Ann"}, "/start "+tok)
	if u := a.complete(t, tok); u.ID != token.UserID("telegram", "10") {
		t.Fatalf("user %+v", u)
	}
	b := newReplica(t, pools[1], fake)

	tok = b.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 11, FirstName: "Bob"}, "/start "+tok)
	if u := b.complete(t, tok); u.Name != "Bob" || u.ID != token.UserID("telegram", "11") {
		t.Fatalf("login started on b: user %+v", u)
	}
	// One login per confirmation, on any replica.
	if st, body := a.call(t, "?token="+tok); st != http.StatusNotFound {
		t.Fatalf("second completion on a: %d %s", st, body)
	}
	// Exactly one replica holds the poller's lock: b never answered a message. pg_locks spans the
	// cluster, where other tests' databases hold advisory locks of their own; count this one's. A
	// holder whose check outlasts its interval (a busy machine) steps down and is elected again a
	// second later, so none may hold it for that moment: wait for one, never more.
	for deadline := time.Now().Add(patience.Bound(10 * time.Second)); ; {
		var holders int
		err := pools[0].QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND granted
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&holders)
		if err != nil || holders > 1 || (holders == 0 && time.Now().After(deadline)) {
			t.Fatalf("advisory lock holders %d (%v), want 1", holders, err)
		}
		if holders == 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// a dies: its session ends, b takes over the bot.
	_ = a.h.Close()
	tok = b.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 12, FirstName: "Cid"}, "/start "+tok)
	if u := b.complete(t, tok); u.Name != "Cid" {
		t.Fatalf("after failover: user %+v", u)
	}
	// The bot answers a confirmation after the login it completes can be read: wait for the third
	// answer (a loaded machine delays it), then require no more than one per login.
	sent := fake.WaitSent(3, patience.Bound(10*time.Second))
	if len(sent) != 3 {
		t.Fatalf("bot sent %+v, want one answer per login", sent)
	}
}

// TestTelegram_PollerLosingItsConnectionStepsDown: when the poller's database session is killed
// (its lock gone with it), it stops polling, a replica is elected again, and logins keep completing.
func TestTelegram_PollerLosingItsConnectionStepsDown(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, botToken, "triad_login_bot")
	pools := replicaPools(t, 2)
	a := newReplica(t, pools[0], fake)
	tok := a.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 10, FirstName: "Ann"}, "/start "+tok)
	a.complete(t, tok)
	b := newReplica(t, pools[1], fake)
	ctx := context.Background()
	// End a's lock-holding session from outside, as a crash of its connection would.
	if _, err := pools[1].Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted`); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tok := b.start(t)
		fake.UserSends(providertest.TelegramUser{ID: 20, FirstName: "Dee"}, "/start "+tok)
		if u := b.complete(t, tok); u.Name != "Dee" {
			t.Fatalf("user %+v", u)
		}
	}
}
