package loginguard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/throttletest"
)

// TestGuard_NewDeviceGetsInUnderAttack: the issue-44 attack, 60 wrong passwords at alice from 6
// addresses, repeated every 30 s for two 15-minute windows (the clock is the test's), with the
// production limits. Alice signed in once from home and threw her device token away (a new phone,
// a second browser, curl): every 5 minutes she tries her right password from home with no token
// and gets in within 3 tries, while the guessers' checked passwords stay at most the account cap
// (50) in every 15 minutes. Her failed logins from a network the account never signed in from are
// refused meanwhile, as a guesser's would be.
func TestGuard_NewDeviceGetsInUnderAttack(t *testing.T) {
	t.Parallel()
	clock := throttletest.NewClock()
	g := loginguard.New(nil, throttle.New(dbtest.New(t), throttle.Options{Now: clock.Now}), errWrong,
		device.NewSigner([]byte("k"), "test", 0, clock.Now))
	ctx := context.Background()
	const home = "192.0.2.10:5000"
	if err := g.Login(ctx, "alice", home, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("alice's first login from home: %v", err)
	}
	start := clock.Now()
	checked := map[int]int{} // the guessers' checks per 15-minute window since the attack began
	for round := range 60 {  // 60 rounds 30 s apart: 30 minutes
		window := int(clock.Now().Sub(start) / throttle.DefaultWindow)
		for a := range 6 {
			for range 10 {
				from := fmt.Sprintf("198.51.100.%d:%d", 1+a, 40000+round)
				err := g.Login(ctx, "alice", from, func(context.Context) error { checked[window]++; return errWrong })
				if err != nil && !errors.Is(err, errWrong) && !errors.Is(err, loginguard.ErrTooManyAttempts) {
					t.Fatalf("round %d: a guess answered %v", round, err)
				}
			}
		}
		if round%10 == 9 { // every 5 minutes, once the account is locked to strangers
			tries := 0
			for tries < 3 {
				tries++
				ran := false
				err := g.Login(ctx, "alice", fmt.Sprintf("192.0.2.10:%d", 6000+round), func(context.Context) error { ran = true; return nil })
				if err == nil {
					break
				}
				if ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
					t.Fatalf("round %d: alice's right password from home: %v (checked %v)", round, err, ran)
				}
				clock.Advance(time.Second)
			}
			if tries == 3 {
				t.Fatalf("round %d (%v into the attack): alice's right password from home, new client, refused 3 times", round, clock.Now().Sub(start))
			}
			ran := false
			err := g.Login(ctx, "alice", "203.0.113.7:1", func(context.Context) error { ran = true; return nil })
			if ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
				t.Fatalf("round %d: a right password from a network alice never used: %v (checked %v), want refused like a guess", round, err, ran)
			}
		}
		clock.Advance(30 * time.Second)
	}
	for w, n := range checked {
		if n > throttle.DefaultAccountMax {
			t.Errorf("window %d: %d guesses checked, want at most %d", w, n, throttle.DefaultAccountMax)
		}
		if n == 0 {
			t.Errorf("window %d: no guess checked; the attack did not run", w)
		}
	}
	t.Logf("guesses checked per 15 minutes: %v", checked)
}

// TestGuard_StolenDeviceTokenLocksNoOwnerOut: a thief holding alice's device token spends its 10
// checks from elsewhere; the token is then worth a stranger's login, and alice, presenting the same
// token from home, is counted as a stranger at a known network and gets in, with a fresh token.
func TestGuard_StolenDeviceTokenLocksNoOwnerOut(t *testing.T) {
	t.Parallel()
	g := loginguard.New(password.NewSized(password.Fast, 2, 8), throttle.New(dbtest.New(t), throttle.Options{}), errWrong,
		device.NewSigner([]byte("k"), "test", 0, nil))
	ctx := context.Background()
	const home = "192.0.2.10:5000"
	tok, err := g.LoginDevice(ctx, "alice", home, "", func(context.Context) error { return nil })
	if err != nil || tok == "" {
		t.Fatalf("alice's first login: %q %v", tok, err)
	}
	for i := range throttle.DefaultMax {
		if _, err := g.LoginDevice(ctx, "alice", "203.0.113.7:1", tok, func(context.Context) error { return errWrong }); !errors.Is(err, errWrong) {
			t.Fatalf("the thief's guess %d: %v, want checked", i+1, err)
		}
	}
	keep, err := g.LoginDevice(ctx, "alice", home, tok, func(context.Context) error { return nil })
	if err != nil {
		t.Fatalf("alice with her spent token from home: %v, want in", err)
	}
	if keep == "" || keep == tok {
		t.Errorf("alice's token after the thief spent it: %q, want a fresh one", keep)
	}
}
