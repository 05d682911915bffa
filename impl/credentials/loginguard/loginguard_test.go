package loginguard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var errWrong = errors.New("wrong password")

const addr = "192.0.2.1:1234"

// newGuard returns a guard whose limit blocks a key after max kept attempts, and the hasher.
func newGuard(t *testing.T, max int) (*loginguard.Guard, *password.Hasher) {
	t.Helper()
	h := password.NewSized(password.Fast, 1, 0)
	return loginguard.New(h, throttle.New(dbtest.New(t), throttle.Options{Max: max}), errWrong, nil), h
}

// login runs one login whose check answers err, and reports whether the check ran.
func login(g *loginguard.Guard, account string, err error) (error, bool) {
	ran := false
	got := g.Login(context.Background(), account, addr, func(context.Context) error {
		ran = true
		return err
	})
	return got, ran
}

func TestGuard_Outcomes(t *testing.T) {
	t.Parallel()
	errDown := errors.New("database down")
	for _, tc := range []struct {
		name string
		// first are the checks' answers of the logins made before the last one.
		first []error
		// wantBlocked is whether the last login is refused by the limit (its check not run).
		wantBlocked bool
	}{
		{"wrong passwords count up to Max", []error{errWrong, errWrong}, true},
		{"one wrong password is under Max", []error{errWrong}, false},
		{"unchecked passwords are given back", []error{errDown, password.ErrBusy, errDown, errWrong}, false},
		{"a right password forgets the failures", []error{errWrong, nil, errWrong}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, _ := newGuard(t, 2)
			for i, e := range tc.first {
				got, ran := login(g, "alice", e)
				if !ran || !errors.Is(got, e) && !(e == nil && got == nil) {
					t.Fatalf("login %d: got %v (check ran: %v), want %v", i, got, ran, e)
				}
			}
			got, ran := login(g, "alice", errWrong)
			if blocked := errors.Is(got, loginguard.ErrTooManyAttempts); blocked != tc.wantBlocked || ran == blocked {
				t.Fatalf("last login: got %v (check ran: %v), want blocked %v", got, ran, tc.wantBlocked)
			}
			if tc.wantBlocked && loginguard.RetryAfter(got) < 1 {
				t.Fatalf("blocked login: Retry-After %d, want at least 1", loginguard.RetryAfter(got))
			}
			if tc.wantBlocked && got.Error() != fmt.Sprintf("too many failed logins; try again in %d seconds", loginguard.RetryAfter(got)) {
				t.Fatalf("blocked login: message %q", got.Error())
			}
		})
	}
}

// A busy hasher is refused before the limiter's database is touched: nothing is counted.
func TestGuard_BusyBeforeDatabase(t *testing.T) {
	t.Parallel()
	g, h := newGuard(t, 1)
	release, err := h.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got, ran := login(g, "alice", errWrong); !errors.Is(got, password.ErrBusy) || ran {
			t.Fatalf("busy hasher: got %v (check ran: %v), want password.ErrBusy unchecked", got, ran)
		}
	}
	release()
	if got, ran := login(g, "alice", errWrong); !errors.Is(got, errWrong) || !ran {
		t.Fatalf("after the busy logins: got %v (check ran: %v), want the check's wrong password", got, ran)
	}
}

// Logins sent at once cannot all slip in while the first are being checked.
func TestGuard_ParallelChecksAtMostMax(t *testing.T) {
	t.Parallel()
	const max, n = 3, 12
	// A hasher with a place for every login, so the limit alone refuses the others.
	g := loginguard.New(password.NewSized(password.Fast, 1, n), throttle.New(dbtest.New(t), throttle.Options{Max: max}), errWrong, nil)
	var checks atomic.Int32
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = g.Login(context.Background(), "alice", addr, func(context.Context) error {
				checks.Add(1)
				time.Sleep(50 * time.Millisecond) // a slow hash: the others arrive meanwhile
				return errWrong
			})
		}()
	}
	wg.Wait()
	if got := checks.Load(); got != max {
		t.Fatalf("%d parallel wrong logins ran %d checks, want %d", n, got, max)
	}
}

// A login holds its hasher place from before its database work until it is answered: while one
// login of a hasher with one place is being worked on (here, inside its check), the next is refused
// with ErrBusy at once, before its attempt is reserved or its account read; once the first is
// answered, the place is free again.
func TestGuard_AdmittedLoginHoldsItsPlace(t *testing.T) {
	t.Parallel()
	g, _ := newGuard(t, 10) // one worker, no queue: one place
	inCheck, finish := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- g.Login(context.Background(), "alice", addr, func(context.Context) error {
			close(inCheck)
			<-finish
			return errWrong
		})
	}()
	<-inCheck
	if got, ran := login(g, "bob", errWrong); !errors.Is(got, password.ErrBusy) || ran {
		t.Fatalf("a login while another holds the only place: got %v (check ran: %v), want ErrBusy before any check", got, ran)
	}
	close(finish)
	if err := <-first; !errors.Is(err, errWrong) {
		t.Fatalf("the first login: %v, want its wrong password", err)
	}
	if got, ran := login(g, "bob", errWrong); !errors.Is(got, errWrong) || !ran {
		t.Fatalf("a login after the first was answered: got %v (check ran: %v), want its check's wrong password", got, ran)
	}
}

// TestBlocked_OneErrorTwoRefusals: the one blocked error carries what it refused: a login (no Why,
// or ErrTooManyAttempts) is a Refused login, a registration (ErrTooManySignups) is not, and both
// give their Retry-After and their own sentence.
func TestBlocked_OneErrorTwoRefusals(t *testing.T) {
	for _, tc := range []struct {
		err         error
		is, isnt    error
		login       bool
		wantMessage string
	}{
		{&loginguard.Blocked{Seconds: 7}, loginguard.ErrTooManyAttempts, loginguard.ErrTooManySignups, true, "too many failed logins; try again in 7 seconds"},
		{fmt.Errorf("wrapped: %w", &loginguard.Blocked{Seconds: 7, Why: loginguard.ErrTooManyAttempts}), loginguard.ErrTooManyAttempts, loginguard.ErrTooManySignups, true, "too many failed logins; try again in 7 seconds"},
		{&loginguard.Blocked{Seconds: 7, Why: loginguard.ErrTooManySignups}, loginguard.ErrTooManySignups, loginguard.ErrTooManyAttempts, false, "too many registrations from this address; try again in 7 seconds"},
	} {
		if !errors.Is(tc.err, tc.is) || errors.Is(tc.err, tc.isnt) {
			t.Errorf("%v: is %v %v, is %v %v", tc.err, tc.is, errors.Is(tc.err, tc.is), tc.isnt, errors.Is(tc.err, tc.isnt))
		}
		if secs, msg, ok := loginguard.Refused(tc.err); ok != tc.login || ok && (secs != 7 || msg != tc.wantMessage) {
			t.Errorf("Refused(%v) = %d %q %v, want login %v", tc.err, secs, msg, ok, tc.login)
		}
		if got := loginguard.RetryAfter(tc.err); got != 7 {
			t.Errorf("RetryAfter(%v) = %d, want 7", tc.err, got)
		}
		var b *loginguard.Blocked
		if !errors.As(tc.err, &b) || b.Error() != tc.wantMessage {
			t.Errorf("message of %v: %q", tc.err, tc.wantMessage)
		}
	}
}
