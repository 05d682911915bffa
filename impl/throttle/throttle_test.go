package throttle_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/throttle/throttletest"
)

func fails(l *throttle.Limiter, key string, n int) {
	for range n {
		l.Fail(key)
	}
}

func TestThrottle_Window(t *testing.T) {
	t.Parallel()
	type step struct {
		fail    int           // failures to record first
		advance time.Duration // then move the clock
		blocked bool          // expected answer of Blocked
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
			{fail: 5, advance: time.Minute - time.Nanosecond, blocked: true, retry: time.Nanosecond},
		}},
		{"blocked ends with the window", []step{{fail: 10, advance: 15 * time.Minute, blocked: false}}},
		{"failures of an ended window do not carry over", []step{
			{fail: 9, advance: 15 * time.Minute, blocked: false},
			{fail: 9, blocked: false},
			{fail: 1, blocked: true, retry: 15 * time.Minute},
		}},
		{"failures while blocked do not extend the block", []step{
			{fail: 10, advance: 10 * time.Minute, blocked: true, retry: 5 * time.Minute},
			{fail: 3, advance: 5 * time.Minute, blocked: false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := throttletest.NewClock()
			l := throttle.New(throttle.Options{Now: c.Now})
			for i, s := range tc.steps {
				fails(l, "alice|127.0.0.1", s.fail)
				c.Advance(s.advance)
				retry, blocked := l.Blocked("alice|127.0.0.1")
				if blocked != s.blocked || retry != s.retry {
					t.Fatalf("step %d: Blocked = %v, %v; want %v, %v", i, retry, blocked, s.retry, s.blocked)
				}
			}
			if _, blocked := l.Blocked("bob|127.0.0.1"); blocked {
				t.Fatal("another key is blocked")
			}
		})
	}
}

func TestThrottle_Options(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(throttle.Options{Max: 3, Window: time.Minute, Now: c.Now})
	fails(l, "k", 2)
	if _, blocked := l.Blocked("k"); blocked {
		t.Fatal("blocked after 2 of 3")
	}
	l.Fail("k")
	if retry, blocked := l.Blocked("k"); !blocked || retry != time.Minute {
		t.Fatalf("after 3 of 3: %v %v", retry, blocked)
	}
	// Max 1 blocks at the first failure.
	one := throttle.New(throttle.Options{Max: 1, Now: c.Now})
	one.Fail("k")
	if _, blocked := one.Blocked("k"); !blocked {
		t.Fatal("Max 1: not blocked after one failure")
	}
}

func TestThrottle_ResetOnSuccess(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(throttle.Options{Now: c.Now})
	fails(l, "alice|10.0.0.1", 9)
	l.Reset("alice|10.0.0.1")
	fails(l, "alice|10.0.0.1", 9)
	if _, blocked := l.Blocked("alice|10.0.0.1"); blocked {
		t.Fatal("the failures before Reset still count")
	}
	l.Fail("alice|10.0.0.1")
	if _, blocked := l.Blocked("alice|10.0.0.1"); !blocked {
		t.Fatal("not blocked at 10 failures after the reset")
	}
	// Reset also lifts a block (the caller only resets after a success, which a block prevents;
	// an operator may still do it).
	l.Reset("alice|10.0.0.1")
	if _, blocked := l.Blocked("alice|10.0.0.1"); blocked || l.Len() != 0 {
		t.Fatalf("after Reset: blocked %v, %d keys", blocked, l.Len())
	}
	l.Reset("never-seen") // no-op
}

func TestThrottle_EvictionBound(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(throttle.Options{Max: 2, MaxKeys: 100, Now: c.Now})
	// Block one key, then flood with 10,000 one-off failures under new keys.
	fails(l, "victim|1.2.3.4", 2)
	for i := range 10_000 {
		l.Fail(fmt.Sprintf("user%d|1.2.3.4", i))
		if n := l.Len(); n > 100 {
			t.Fatalf("%d keys held, MaxKeys 100", n)
		}
	}
	if _, blocked := l.Blocked("victim|1.2.3.4"); !blocked {
		t.Fatal("a flood of new keys evicted a blocked key while counting keys could go")
	}
	// The newest counting keys survive, the oldest were evicted.
	l.Fail("user9999|1.2.3.4")
	if _, blocked := l.Blocked("user9999|1.2.3.4"); !blocked {
		t.Fatal("the newest key lost its count")
	}
	l.Fail("user0|1.2.3.4")
	if _, blocked := l.Blocked("user0|1.2.3.4"); blocked {
		t.Fatal("the oldest key kept its count past eviction")
	}
	// When every key is blocked, the oldest blocked key goes.
	full := throttle.New(throttle.Options{Max: 1, MaxKeys: 3, Now: c.Now})
	for _, k := range []string{"a", "b", "c", "d"} {
		full.Fail(k)
	}
	if _, blocked := full.Blocked("a"); blocked || full.Len() != 3 {
		t.Fatalf("oldest blocked key kept: %d keys", full.Len())
	}
	for _, k := range []string{"b", "c", "d"} {
		if _, blocked := full.Blocked(k); !blocked {
			t.Fatalf("%s evicted instead of the oldest", k)
		}
	}
	// Expired keys are dropped before any live one.
	c.Advance(15 * time.Minute)
	full.Fail("e")
	if full.Len() != 1 {
		t.Fatalf("%d keys after expiry, want only the new one", full.Len())
	}
}

// TestThrottle_Concurrent hammers one Limiter from many goroutines (run with -race): the counts
// stay exact and the bound holds.
func TestThrottle_Concurrent(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(throttle.Options{Max: 1000, MaxKeys: 50, Now: c.Now})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				l.Fail("shared")
				l.Fail(fmt.Sprintf("g%d-%d", g, i%40))
				l.Blocked("shared")
				if i%100 == 0 {
					l.Reset(fmt.Sprintf("g%d-0", g))
				}
			}
		})
	}
	wg.Wait()
	if n := l.Len(); n > 50 {
		t.Fatalf("%d keys held, MaxKeys 50", n)
	}
	// Exact counting: 16 × 499 concurrent failures stay below a limit of 16 × 500, 16 more reach it.
	shared := throttle.New(throttle.Options{Max: 16 * 500, Now: c.Now})
	wg = sync.WaitGroup{}
	for range 16 {
		wg.Go(func() { fails(shared, "k", 499) })
	}
	wg.Wait()
	if _, blocked := shared.Blocked("k"); blocked {
		t.Fatal("blocked below the limit: a lost or doubled count")
	}
	wg = sync.WaitGroup{}
	for range 16 {
		wg.Go(func() { shared.Fail("k") })
	}
	wg.Wait()
	if _, blocked := shared.Blocked("k"); !blocked {
		t.Fatal("not blocked at exactly the limit: lost counts")
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

func TestThrottle_Attempt(t *testing.T) {
	t.Parallel()
	c := throttletest.NewClock()
	l := throttle.New(throttle.Options{Now: c.Now})
	// Ten attempts pass and count; the eleventh is refused and does not count.
	for i := range 10 {
		if _, blocked := l.Attempt("k"); blocked {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	c.Advance(time.Minute)
	if retry, blocked := l.Attempt("k"); !blocked || retry != 14*time.Minute {
		t.Fatalf("attempt 11: %v %v, want blocked for 14m", retry, blocked)
	}
	// A right password resets what its Attempt counted.
	l.Reset("k")
	for range 9 {
		l.Attempt("k")
	}
	l.Reset("k") // the 9th succeeded
	if _, blocked := l.Attempt("k"); blocked {
		t.Fatal("blocked after a reset")
	}
	c.Advance(15 * time.Minute)
	fails(l, "k", 10)
	c.Advance(15 * time.Minute)
	if _, blocked := l.Attempt("k"); blocked {
		t.Fatal("blocked after the window")
	}
}

// TestThrottle_AttemptConcurrent: of many attempts at once exactly Max pass (run with -race).
func TestThrottle_AttemptConcurrent(t *testing.T) {
	t.Parallel()
	l := throttle.New(throttle.Options{Now: throttletest.NewClock().Now})
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if _, blocked := l.Attempt("k"); !blocked {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != throttle.DefaultMax {
		t.Fatalf("%d of 200 concurrent attempts passed, want %d", passed.Load(), throttle.DefaultMax)
	}
}
