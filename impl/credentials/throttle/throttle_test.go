package throttle_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/throttletest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// reserve is Reserve that fails the test on a database error.
func reserve(t *testing.T, l *throttle.Limiter, key string) throttle.Reservation {
	t.Helper()
	r, err := l.Reserve(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fails records n wrong passwords: attempts reserved and kept.
func fails(t *testing.T, l *throttle.Limiter, key string, n int) {
	t.Helper()
	for i := range n {
		if r := reserve(t, l, key); r.Blocked {
			t.Fatalf("failure %d of %d refused", i+1, n)
		}
	}
}

// blocked reports what the next attempt would get, and gives that attempt back when it passed.
func blocked(t *testing.T, l *throttle.Limiter, key string) (time.Duration, bool) {
	t.Helper()
	r := reserve(t, l, key)
	if !r.Blocked {
		if err := r.Release(); err != nil {
			t.Fatal(err)
		}
	}
	return r.RetryAfter, r.Blocked
}

func TestThrottle_Window(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	type step struct {
		fail    int           // wrong passwords to record first
		advance time.Duration // then move the clock
		blocked bool          // whether the next attempt is refused
		retry   time.Duration // expected retryAfter when blocked
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"below the limit", []step{{fail: 9, blocked: false}}},
		{"at the limit", []step{{fail: 10, blocked: true, retry: 15 * time.Minute}}},
		{"retry counts down", []step{{fail: 10, advance: 10 * time.Minute, blocked: true, retry: 5 * time.Minute}}},
		{"window is fixed from the first failure", []step{
			{fail: 5, advance: 14 * time.Minute, blocked: false},
			{fail: 5, advance: time.Minute - time.Microsecond, blocked: true, retry: time.Microsecond},
		}},
		{"blocked ends with the window", []step{{fail: 10, advance: 15 * time.Minute, blocked: false}}},
		{"failures of an ended window do not carry over", []step{
			{fail: 9, advance: 15 * time.Minute, blocked: false},
			{fail: 9, blocked: false},
			{fail: 1, blocked: true, retry: 15 * time.Minute},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := throttletest.NewClock()
			l := throttle.New(pool, throttle.Options{Now: c.Now})
			key := "alice|127.0.0.1|" + tc.name // one key per case: the cases share a database
			for i, s := range tc.steps {
				fails(t, l, key, s.fail)
				c.Advance(s.advance)
				retry, b := blocked(t, l, key)
				if b != s.blocked || retry != s.retry {
					t.Fatalf("step %d: blocked = %v, %v; want %v, %v", i, retry, b, s.retry, s.blocked)
				}
			}
			if _, b := blocked(t, l, "bob|127.0.0.1|"+tc.name); b {
				t.Fatal("another key is blocked")
			}
		})
	}
}

func TestThrottle_Options(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	c := throttletest.NewClock()
	l := throttle.New(pool, throttle.Options{Max: 3, Window: time.Minute, Now: c.Now})
	fails(t, l, "k", 2)
	if _, b := blocked(t, l, "k"); b {
		t.Fatal("blocked after 2 of 3")
	}
	fails(t, l, "k", 1)
	if retry, b := blocked(t, l, "k"); !b || retry != time.Minute {
		t.Fatalf("after 3 of 3: %v %v", retry, b)
	}
	one := throttle.New(pool, throttle.Options{Max: 1, Now: c.Now})
	fails(t, one, "k1", 1)
	if _, b := blocked(t, one, "k1"); !b {
		t.Fatal("Max 1: not blocked after one failure")
	}
}

// TestThrottle_SucceededForgets: a right password clears the failures before it.
func TestThrottle_SucceededForgets(t *testing.T) {
	t.Parallel()
	l := throttle.New(dbtest.New(t), throttle.Options{Now: throttletest.NewClock().Now})
	fails(t, l, "k", 9)
	if err := reserve(t, l, "k").Succeeded(); err != nil {
		t.Fatal(err)
	}
	fails(t, l, "k", 10)
	if _, b := blocked(t, l, "k"); !b {
		t.Fatal("not blocked at 10 failures after the success")
	}
}

// TestThrottle_ReleaseDoesNotCount: attempts whose check did not happen (a database error, a
// cancelled request) are given back, however many there are, even after the request's context
// has ended.
func TestThrottle_ReleaseDoesNotCount(t *testing.T) {
	t.Parallel()
	l := throttle.New(dbtest.New(t), throttle.Options{Now: throttletest.NewClock().Now})
	for range 25 {
		ctx, cancel := context.WithCancel(context.Background())
		r, err := l.Reserve(ctx, "k")
		if err != nil || r.Blocked {
			t.Fatalf("reserve: %+v %v", r, err)
		}
		cancel() // the request is gone by the time the handler gives the attempt back
		if err := r.Release(); err != nil {
			t.Fatal(err)
		}
	}
	fails(t, l, "k", 9)
	if _, b := blocked(t, l, "k"); b {
		t.Fatal("released attempts counted")
	}
}

// TestThrottle_SharedAcrossInstances: two limiters (two replicas) over one database share the
// count: 5 failures on each block the key on both.
func TestThrottle_SharedAcrossInstances(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	c := throttletest.NewClock()
	var ls []*throttle.Limiter
	for range 2 {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		ls = append(ls, throttle.New(pool, throttle.Options{Now: c.Now}))
	}
	for range 5 {
		fails(t, ls[0], "k", 1)
		fails(t, ls[1], "k", 1)
	}
	for i, l := range ls {
		if retry, b := blocked(t, l, "k"); !b || retry != 15*time.Minute {
			t.Fatalf("instance %d after 10 failures over both: %v %v", i, retry, b)
		}
	}
}

// TestThrottle_DatabaseDown: with the database unreachable Reserve fails and counts nothing.
func TestThrottle_DatabaseDown(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	l := throttle.New(pool, throttle.Options{})
	pool.Close()
	if _, err := l.Reserve(context.Background(), "k"); err == nil {
		t.Fatal("Reserve on a closed pool succeeded")
	}
}

func TestThrottle_LoginKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ account, remote, want string }{
		{"Alice", "127.0.0.1:5555", "alice|127.0.0.1"},
		{"alice", "127.0.0.1:6666", "alice|127.0.0.1"},
		{" ALICE\t", "127.0.0.1:6666", "alice|127.0.0.1"},
		{"Ada@Example.COM", "10.1.2.3:443", "ada@example.com|10.1.2.3"},
		{"alice", "[::ffff:10.1.2.3]:80", "alice|10.1.2.3"},
		{"alice", "[2001:db8:1:2:3:4:5:6]:80", "alice|2001:db8:1:2::/64"},
		{"alice", "[2001:db8:1:2:ffff::1]:81", "alice|2001:db8:1:2::/64"},
		{"alice", "[fe80::1%eth0]:80", "alice|fe80::/64"},
		{"alice", "@", "alice|@"},
	}
	for _, tc := range cases {
		if got := throttle.LoginKey(tc.account, tc.remote); got != tc.want {
			t.Errorf("LoginKey(%q, %q) = %q, want %q", tc.account, tc.remote, got, tc.want)
		}
	}
}

func TestThrottle_RetryAfterSeconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]int{
		0: 1, time.Nanosecond: 1, time.Second: 1, time.Second + 1: 2, 14*time.Minute + 59*time.Second + 1: 900,
	} {
		if got := throttle.RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

// TestThrottle_ReserveConcurrent: of many attempts at once exactly Max pass (run with -race).
func TestThrottle_ReserveConcurrent(t *testing.T) {
	t.Parallel()
	l := throttle.New(dbtest.New(t), throttle.Options{Now: throttletest.NewClock().Now})
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			r, err := l.Reserve(context.Background(), "k")
			if err != nil {
				t.Error(err)
				return
			}
			if !r.Blocked {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != throttle.DefaultMax {
		t.Fatalf("%d of 100 concurrent attempts passed, want %d", passed.Load(), throttle.DefaultMax)
	}
}

// reserveLogin is ReserveLogin that fails the test on a database error.
func reserveLogin(t *testing.T, l *throttle.Limiter, account, addr string) throttle.Reservation {
	t.Helper()
	r, err := l.ReserveLogin(context.Background(), account, addr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestThrottle_LoginPerAddress: one address failing over many accounts is never blocked by its
// own count: past AddressMax (100 by default) its logins are given check slots AddressInterval
// apart, at most three intervals ahead; beyond that they are refused until the schedule has room
// (RetryAfter one interval), whatever the account. Another address is not affected; after the
// window the address is counted afresh; the pair limit still blocks one account at Max.
func TestThrottle_LoginPerAddress(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(dbtest.New(t), throttle.Options{Now: c.Now})
	const spray, step = "192.0.2.1:4000", throttle.DefaultAddressInterval
	for i := range throttle.DefaultAddressMax {
		if r := reserveLogin(t, l, fmt.Sprintf("user%d", i), spray); r.Blocked || r.Wait != 0 {
			t.Fatalf("guess %d over distinct accounts: %+v", i+1, r)
		}
	}
	for i, account := range []string{"alice", "user-new", "user-new2", "user-new3"} {
		if r := reserveLogin(t, l, account, "192.0.2.1:4001"); r.Blocked || r.Wait != time.Duration(i)*step {
			t.Fatalf("%s from the spraying address after %d failures: %+v, want a slot in %v", account,
				throttle.DefaultAddressMax, r, time.Duration(i)*step)
		}
	}
	if r := reserveLogin(t, l, "alice", spray); !r.Blocked || r.RetryAfter != step {
		t.Fatalf("with three intervals scheduled: %+v, want blocked for one interval", r)
	}
	c.Advance(step)
	if r := reserveLogin(t, l, "alice", spray); r.Blocked || r.Wait != 3*step {
		t.Fatalf("an interval later: %+v, want the slot three intervals on", r)
	}
	// Another address is not affected, and its successes work as before.
	if r := reserveLogin(t, l, "alice", "192.0.2.2:4000"); r.Blocked || r.Wait != 0 {
		t.Fatalf("another address: %+v", r)
	} else if err := r.Succeeded(); err != nil {
		t.Fatal(err)
	}
	c.Advance(throttle.DefaultWindow)
	for i := range 5 {
		if r := reserveLogin(t, l, fmt.Sprintf("later%d", i), spray); r.Blocked || r.Wait != 0 {
			t.Fatalf("still slowed after the window: %+v", r)
		}
	}

	// The pair limit is unchanged: one account from one address is blocked at Max.
	for range throttle.DefaultMax {
		reserveLogin(t, l, "bob", "198.51.100.1:1")
	}
	if r := reserveLogin(t, l, "bob", "198.51.100.1:1"); !r.Blocked {
		t.Fatal("pair not blocked at Max")
	}
}

// TestThrottle_LoginAddressReleases: attempts whose check did not happen are given back to the
// address too, a success gives back its own attempt only (an attacker's own account, logged in
// now and then, does not reset its guesses at others), and a refusal by the address's full
// schedule leaves the pair's count as it was.
func TestThrottle_LoginAddressReleases(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	pool := dbtest.New(t)
	l := throttle.New(pool, throttle.Options{Max: 3, AddressMax: 5, AddressInterval: time.Second, Now: c.Now})
	const addr = "203.0.113.9:1"
	for range 20 {
		if err := reserveLogin(t, l, "x", addr).Release(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		reserveLogin(t, l, fmt.Sprintf("guess%d", i), addr)
	}
	for range 20 {
		if err := reserveLogin(t, l, "mine", addr).Succeeded(); err != nil {
			t.Fatal(err)
		}
	}
	reserveLogin(t, l, "guess4", addr) // the 5th failure
	for i := range 4 {                 // the schedule: slots now and 1, 2, 3 s on
		if r := reserveLogin(t, l, fmt.Sprintf("slow%d", i), addr); r.Wait != time.Duration(i)*time.Second {
			t.Fatalf("successes reset the address's failures: %+v", r)
		}
	}
	// Attempts the full schedule refused do not count for their pair: a limiter over the same
	// table with a higher address limit (another replica's setting) gives the pair all of Max.
	for range 3 {
		if r := reserveLogin(t, l, "victim", addr); !r.Blocked {
			t.Fatal("the full schedule let an attempt through")
		}
	}
	wider := throttle.New(pool, throttle.Options{Max: 3, AddressMax: 100, Now: c.Now})
	for i := range 3 {
		if r := reserveLogin(t, wider, "victim", addr); r.Blocked {
			t.Fatalf("attempt %d of the pair refused: the address's refusals counted for it", i+1)
		}
	}
}

// TestThrottle_LoginPerAddressConcurrent: of many logins at once over distinct accounts from one
// address, AddressMax pass at once and four more get the slots now and one, two and three
// intervals on; the rest are refused (run with -race).
func TestThrottle_LoginPerAddressConcurrent(t *testing.T) {
	t.Parallel()
	l := throttle.New(dbtest.New(t), throttle.Options{AddressMax: 20, Now: throttletest.NewClock().Now})
	var mu sync.Mutex
	waits := map[time.Duration]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			r, err := l.ReserveLogin(context.Background(), fmt.Sprintf("u%d", i), "192.0.2.50:1")
			if err != nil {
				t.Error(err)
				return
			}
			if !r.Blocked {
				mu.Lock()
				waits[r.Wait]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	step := throttle.DefaultAddressInterval
	want := map[time.Duration]int{0: 21, step: 1, 2 * step: 1, 3 * step: 1}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Fatalf("waits of the attempts let through: %v, want %v", waits, want)
	}
}

func TestThrottle_AddressKey(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"127.0.0.1:5555": "ADDRESS|127.0.0.1", "[::ffff:10.1.2.3]:80": "ADDRESS|10.1.2.3",
		"[2001:db8:1:2:3:4:5:6]:80": "ADDRESS|2001:db8:1:2::/64",
	} {
		if got := throttle.AddressKey(remote); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", remote, got, want)
		}
	}
	// No account's key is an address key: accounts are lower-cased.
	if throttle.LoginKey("ADDRESS", "127.0.0.1:1") == "ADDRESS|127.0.0.1" {
		t.Error("an account named ADDRESS shares its address's key")
	}
}

// TestThrottle_BlockedRemembered: a key found blocked is refused again for a second without a
// query (here the database is gone meanwhile), with the block's own Retry-After; after that
// second the database is asked again. So is an address whose check schedule was found full.
func TestThrottle_BlockedRemembered(t *testing.T) {
	t.Parallel()
	pool, err := pgxpool.New(context.Background(), dbtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := throttletest.NewClock()
	l := throttle.New(pool, throttle.Options{Max: 2, AddressMax: 2, Now: c.Now})
	fails(t, l, "k", 2)
	if r := reserve(t, l, "k"); !r.Blocked {
		t.Fatal("not blocked at Max")
	}
	const spray = "192.0.2.9:1"
	for i := range 6 { // two counted, four slots, then the schedule is full
		reserveLogin(t, l, fmt.Sprintf("u%d", i), spray)
	}
	if r := reserveLogin(t, l, "u-full", spray); !r.Blocked {
		t.Fatal("schedule not full")
	}
	pool.Close()
	c.Advance(500 * time.Millisecond)
	r, err := l.Reserve(context.Background(), "k")
	if err != nil || !r.Blocked || r.RetryAfter != throttle.DefaultWindow-500*time.Millisecond {
		t.Fatalf("half a second later: %+v, %v; want blocked from memory with the window's end", r, err)
	}
	if r, err := l.ReserveLogin(context.Background(), "u-other", spray); err != nil || !r.Blocked {
		t.Fatalf("the full address half a second later: %+v, %v; want blocked from memory", r, err)
	}
	c.Advance(600 * time.Millisecond)
	if _, err := l.Reserve(context.Background(), "k"); err == nil {
		t.Fatal("a second later the database was not asked")
	}
}

// TestThrottle_AccountCapOverAddresses: wrong passwords at one account from many addresses (a
// botnet) stop at AccountMax less the known networks' fifth, whatever the address; a right password
// does not reset the account's count, and makes its network known: logins from there have the
// last fifth, then stop too; other accounts are not affected; a device of the account is counted
// apart.
func TestThrottle_AccountCapOverAddresses(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(dbtest.New(t), throttle.Options{Max: 3, AccountMax: 5, Now: c.Now})
	ctx := context.Background()
	for i := range 4 {
		r, err := l.ReserveLogin(ctx, "alice", fmt.Sprintf("198.51.100.%d:1", i))
		if err != nil || r.Blocked {
			t.Fatalf("attempt %d: %+v %v", i+1, r, err)
		}
		if i == 3 {
			if err := r.Succeeded(); err != nil { // the real user's right password: only itself given back
				t.Fatal(err)
			}
		}
	}
	if r, err := l.ReserveLogin(ctx, "alice", "203.0.113.2:1"); err != nil || r.Blocked {
		t.Fatalf("alice's fourth wrong password: %+v %v, want counted", r, err)
	}
	if r, err := l.ReserveLogin(ctx, "ALICE", "203.0.113.1:1"); err != nil || !r.Blocked {
		t.Fatalf("alice from a sixth address past 4 wrong passwords: %+v %v, want blocked", r, err)
	}
	if r, err := l.ReserveLogin(ctx, "alice", "198.51.100.3:2"); err != nil || r.Blocked {
		t.Fatalf("alice from the network she signed in from: %+v %v, want counted in its share", r, err)
	}
	if r, err := l.ReserveLogin(ctx, "Alice", "198.51.100.3:3"); err != nil || !r.Blocked {
		t.Fatalf("alice from her network past its share of 1: %+v %v, want blocked", r, err)
	}
	if r, err := l.ReserveLogin(ctx, "bob", "203.0.113.1:1"); err != nil || r.Blocked {
		t.Fatalf("bob: %+v %v, want counted", r, err)
	}
	if r, err := l.ReserveDevice(ctx, "alice-device", "alice", "203.0.113.1:1"); err != nil || r.Blocked {
		t.Fatalf("alice's device: %+v %v, want counted", r, err)
	}
	c.Advance(throttle.DefaultWindow)
	if r, err := l.ReserveLogin(ctx, "alice", "203.0.113.1:1"); err != nil || r.Blocked {
		t.Fatalf("alice after the window: %+v %v", r, err)
	}
}
