package throttletest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// Surface is one surface's password login as the shared throttle scenarios drive it; each surface's
// test states only this, what differs between surfaces.
type Surface struct {
	// Start runs the surface over pool with the login throttle o and the password hasher h (nil:
	// the surface's test hasher) and returns it as seen from the default client address.
	Start func(t *testing.T, pool *pgxpool.Pool, o throttle.Options, h *password.Hasher) Site
	// User and Other are two account names; UserVariant is User spelled otherwise (case, spaces),
	// which the surface must count as User.
	User, Other, UserVariant string
	// Failed is the status of a wrong password.
	Failed int
}

// Site is a running surface seen from one client address.
type Site interface {
	// Register creates an account with the password, failing the test if it cannot.
	Register(user, password string)
	// Login tries a password login and returns the status.
	Login(user, password string) int
	// LoginContext is Login on ctx: it returns ctx's error if ctx ends before the answer comes,
	// which hangs up on the server.
	LoginContext(ctx context.Context, user, password string) (int, error)
	// WantBlocked tries a password login and fails the test unless it is the surface's documented
	// 429 with secs seconds in Retry-After and the message.
	WantBlocked(user, password, secs string)
	// From is the same surface seen from another loopback address.
	From(ip string) Site
}

// The passwords the scenarios use.
const (
	right = "correct-horse"
	wrong = "wrong-horse"
)

// Run runs every login-throttle scenario against s, each on its own database.
func Run(t *testing.T, s Surface) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, Surface)
	}{
		{"blocks the account and address pair for the window", blocksPair},
		{"a success resets the count", resetOnSuccess},
		{"concurrent guesses get only Max checks", concurrent},
		{"an outage counts no guesses", outage},
		{"a login abandoned after its reservation counts nothing", abandoned},
		{"instances on one database share the count", sharedByInstances},
		{"one address over many accounts", perAddress},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t, s)
		})
	}
}

func (s Surface) fail(t *testing.T, site Site, user string, n int) {
	t.Helper()
	for i := range n {
		if st := site.Login(user, wrong); st != s.Failed {
			t.Fatalf("wrong password %d of %d for %q: %d, want %d", i+1, n, user, st, s.Failed)
		}
	}
}

func wantOK(t *testing.T, site Site, user string) {
	t.Helper()
	if st := site.Login(user, right); st != http.StatusOK {
		t.Fatalf("login %q: %d, want 200", user, st)
	}
}

// blocksPair: ten wrong passwords for one account from one address block that pair for the rest
// of the 15-minute window, even for the right password; another address, another account and the
// end of the window are not blocked; unknown accounts are counted alike, so a 429 does not tell
// which accounts exist.
func blocksPair(t *testing.T, s Surface) {
	clock := NewClock()
	site := s.Start(t, dbtest.New(t), throttle.Options{Now: clock.Now}, nil)
	site.Register(s.User, right)
	site.Register(s.Other, right)

	s.fail(t, site, s.User, 5)
	s.fail(t, site, s.UserVariant, 5)
	site.WantBlocked(s.User, right, "900")
	site.WantBlocked(s.UserVariant, wrong, "900")

	wantOK(t, site.From("127.0.0.2"), s.User)
	wantOK(t, site, s.Other)

	s.fail(t, site, "nobody"+s.Other, 10)
	site.WantBlocked("nobody"+s.Other, right, "900")

	// Retry-After counts down; the window ends 15 minutes after the first failure.
	clock.Advance(14*time.Minute + 30*time.Second)
	site.WantBlocked(s.User, right, "30")
	clock.Advance(30 * time.Second)
	wantOK(t, site, s.User)
}

// resetOnSuccess: a successful login clears the failures before it.
func resetOnSuccess(t *testing.T, s Surface) {
	site := s.Start(t, dbtest.New(t), throttle.Options{Now: NewClock().Now}, nil)
	site.Register(s.User, right)
	s.fail(t, site, s.User, 9)
	wantOK(t, site, s.User)
	s.fail(t, site, s.User, 9) // 18 failures in the window, but only 9 since the success
	wantOK(t, site, s.User)
	s.fail(t, site, s.User, 10)
	site.WantBlocked(s.User, right, "900")
}

// concurrent: 30 wrong passwords sent at once still get only 10 password checks; the others are
// refused with 429 while the first are being checked.
func concurrent(t *testing.T, s Surface) {
	site := s.Start(t, dbtest.New(t), throttle.Options{Now: NewClock().Now}, nil)
	site.Register(s.User, right)
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = site.Login(s.User, wrong) })
	}
	wg.Wait()
	count := map[int]int{}
	for _, st := range statuses {
		count[st]++
	}
	if count[s.Failed] != 10 || count[http.StatusTooManyRequests] != 20 {
		t.Fatalf("statuses %v; want 10 × %d and 20 × 429", count, s.Failed)
	}
}

// outage: logins that fail because the database is down are not guesses: after the outage the
// right password logs in, and wrong ones still count from zero.
func outage(t *testing.T, s Surface) {
	pool, out := dbtest.NewWithOutage(t)
	site := s.Start(t, pool, throttle.Options{Max: 4, Now: NewClock().Now}, nil)
	site.Register(s.User, right)
	out.Begin()
	for i := range 15 {
		pw := wrong
		if i%2 == 0 {
			pw = right
		}
		if st := site.Login(s.User, pw); st < 500 {
			t.Fatalf("login %d during the outage: %d", i+1, st)
		}
	}
	out.End()
	wantOK(t, site, s.User)
	s.fail(t, site, s.User, 4)
	site.WantBlocked(s.User, right, "900")
}

// abandoned: a login whose attempt was counted but whose password was never checked, because the
// client hung up while the login waited for a hashing worker, is given back. Twice Max such logins,
// right and wrong passwords alike, leave the right password logging in afterwards. The outage
// scenario cannot show this: there the database refuses the reservation itself, so nothing was
// counted to give back.
func abandoned(t *testing.T, s Surface) {
	const limit = 3
	h := password.NewSized(password.Fast, 1, 4) // one worker, held below, so a login queues for it
	site := s.Start(t, dbtest.New(t), throttle.Options{Max: limit, Now: NewClock().Now}, h)
	site.Register(s.User, right)
	release, err := h.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * limit {
		pw := wrong
		if i%2 == 0 {
			pw = right
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan answer, 1)
		go func() {
			st, err := site.LoginContext(ctx, s.User, pw)
			done <- answer{st, err}
		}()
		// A login queued for the hasher has passed the throttle: its attempt is counted.
		waitUntil(t, done, func() bool { return h.Waiting() == 1 }, "login %d never reached the hasher", i+1)
		cancel()
		if a := <-done; a.err == nil {
			t.Fatalf("login %d answered %d though the client hung up", i+1, a.status)
		}
		// The server has noticed the hang-up once the login leaves the queue.
		waitUntil(t, done, func() bool { return h.Waiting() == 0 }, "login %d still queued after the hang-up", i+1)
	}
	release()
	wantOK(t, site, s.User)
}

// answer is what LoginContext returned.
type answer struct {
	status int
	err    error
}

// waitUntil polls cond for up to ten seconds, failing the test with the message if it never holds
// or if done delivers first (the request was answered instead of waiting).
func waitUntil(t *testing.T, done <-chan answer, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		select {
		case a := <-done:
			t.Fatalf(format+": answered %+v", append(args, a)...)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf(format, args...)
		}
	}
}

// sharedByInstances: two server instances on one database share the count: four wrong passwords
// (the limit, made small to spare hashing) spread over both block the account on both from the
// fifth attempt.
func sharedByInstances(t *testing.T, s Surface) {
	url := dbtest.NewURL(t)
	clock := NewClock()
	var sites []Site
	for range 2 {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		sites = append(sites, s.Start(t, pool, throttle.Options{Max: 4, Now: clock.Now}, nil))
	}
	sites[0].Register(s.User, right)
	for range 2 {
		s.fail(t, sites[0], s.User, 1)
		s.fail(t, sites[1], s.User, 1)
	}
	for _, site := range sites {
		site.WantBlocked(s.User, right, "900")
	}
}

// perAddress: one address guessing over many distinct accounts never locks out a real user of
// that address: past AddressMax failures its logins are checked one slot (AddressInterval) apart,
// the right password among them gets in, and only a guess that would wait more than three slots
// gets 429 (Retry-After 1), until the schedule has room again. Another address is not affected.
func perAddress(t *testing.T, s Surface) {
	clock := NewClock()
	const step = 20 * time.Millisecond
	site := s.Start(t, dbtest.New(t), throttle.Options{AddressMax: 12, AddressInterval: step, Now: clock.Now}, nil)
	site.Register(s.User, right)
	guess := func(i int) string { return fmt.Sprintf("guess%d%s", i, s.Other) }
	for i := range 12 { // one failure per account: the per-account limit never fires
		s.fail(t, site, guess(i), 1)
	}
	wantOK(t, site, s.User) // the slot now
	start := time.Now()
	s.fail(t, site, guess(12), 1) // slots one, two and three steps on (the clock stands still)
	s.fail(t, site, guess(13), 1)
	s.fail(t, site, guess(14), 1)
	if took := time.Since(start); took < 3*step {
		t.Fatalf("three guesses past the address's limit took %v, want at least %v (one slot each)", took, 3*step)
	}
	site.WantBlocked(guess(15), wrong, "1")

	other := site.From("127.0.0.2")
	wantOK(t, other, s.User)
	s.fail(t, other, guess(0), 1)

	clock.Advance(4 * step)
	wantOK(t, site, s.User)
}
