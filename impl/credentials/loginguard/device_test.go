package loginguard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestGuard_DeviceIsNeverLockedOutByOthers: OWASP's device cookies. A right password hands out a
// device token; once guessers have locked alice's pair at her address and her account over every
// address, a login carrying her token still has its password checked and succeeds, while a login
// without it is refused (the address's schedule: throttle's tests and the binary's). Her device is itself refused after
// Max wrong passwords, a token of another account or signer is worth nothing, and a login with a
// valid token that keeps it gets no new one.
func TestGuard_DeviceIsNeverLockedOutByOthers(t *testing.T) {
	t.Parallel()
	signer := device.NewSigner([]byte("k"), "test", 0, nil)
	g := loginguard.New(password.NewSized(password.Fast, 2, 8),
		throttle.New(dbtest.New(t), throttle.Options{Max: 3, AccountMax: 5}), errWrong, signer)
	ctx := context.Background()
	try := func(account, from, tok string, err error) (string, error, bool) {
		ran := false
		keep, got := g.LoginDevice(ctx, account, from, tok, func(context.Context) error { ran = true; return err })
		return keep, got, ran
	}
	tok, err, _ := try("alice", addr, "", nil)
	if err != nil || tok == "" {
		t.Fatalf("alice's first login: %q %v, want a device token", tok, err)
	}
	// Guessers: alice's pair at her address, her account from other addresses.
	for i := range 6 {
		try("alice", fmt.Sprintf("198.51.100.%d:1", i), "", errWrong)
		try("alice", addr, "", errWrong)
	}
	if _, err, ran := try("alice", "203.0.113.9:1", "", nil); ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
		t.Fatalf("alice's right password from a new address, no device: ran %v, %v; want refused (the account is locked)", ran, err)
	}
	if _, err, ran := try("alice", addr, "", nil); ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
		t.Fatalf("alice's right password from her address, no device: ran %v, %v; want refused", ran, err)
	}
	keep, err, ran := try("alice", addr, tok, nil)
	if err != nil || !ran {
		t.Fatalf("alice's right password with her device token: ran %v, %v; want in", ran, err)
	}
	if keep != "" {
		t.Errorf("a fresh device token was replaced: %q", keep)
	}
	// Her token is not bob's, nor another signer's.
	other := loginguard.New(nil, throttle.New(dbtest.New(t), throttle.Options{Max: 3}), errWrong, device.NewSigner([]byte("other"), "test", 0, nil))
	for range 3 {
		other.Login(ctx, "alice", addr, func(context.Context) error { return errWrong })
	}
	if _, err := other.LoginDevice(ctx, "alice", addr, tok, func(context.Context) error { return nil }); !errors.Is(err, loginguard.ErrTooManyAttempts) {
		t.Errorf("a token of another signer: %v, want refused as a stranger", err)
	}
	for range 3 {
		try("bob", addr, "", errWrong)
	}
	if _, err, ran := try("bob", addr, tok, nil); ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
		t.Errorf("alice's token for bob, whose pair is locked: ran %v, %v; want refused as a stranger", ran, err)
	}
	// Her device guessing: Max wrong passwords, then refused.
	for range 3 {
		if _, err, _ := try("alice", addr, tok, errWrong); !errors.Is(err, errWrong) {
			t.Fatalf("a wrong password on the device: %v", err)
		}
	}
	if _, err, ran := try("alice", addr, tok, nil); ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
		t.Errorf("the device after 3 wrong passwords: ran %v, %v; want refused", ran, err)
	}
}

// TestGuard_DeviceBoundToTheAccountAsItIs: with BindDevices, a device token is the account's as it
// was when issued: once the password changes (the binding with it), or another user holds the
// name (an email its owner gave up, registered again), the token is a stranger's and the locks
// others' guesses set apply; unchanged, it passes them.
func TestGuard_DeviceBoundToTheAccountAsItIs(t *testing.T) {
	t.Parallel()
	binding := map[string][2]string{"alice": {"1", "hash-a"}}
	var mu sync.Mutex
	g := loginguard.New(password.NewSized(password.Fast, 2, 8), throttle.New(dbtest.New(t), throttle.Options{Max: 3, AccountMax: 5}), errWrong,
		device.NewSigner([]byte("k"), "test", 0, nil))
	g.BindDevices(func(_ context.Context, account string) (string, string, error) {
		mu.Lock()
		defer mu.Unlock()
		return binding[account][0], binding[account][1], nil
	})
	ctx := context.Background()
	tok, err := g.LoginDevice(ctx, "alice", addr, "", func(context.Context) error { return nil })
	if err != nil || tok == "" {
		t.Fatalf("alice's first login: %q %v", tok, err)
	}
	for range 3 { // her pair at addr locked
		g.Login(ctx, "alice", addr, func(context.Context) error { return errWrong })
	}
	try := func() (bool, error) {
		ran := false
		_, err := g.LoginDevice(ctx, "alice", addr, tok, func(context.Context) error { ran = true; return nil })
		return ran, err
	}
	if ran, err := try(); !ran || err != nil {
		t.Fatalf("her token, binding unchanged: ran %v, %v; want in", ran, err)
	}
	for _, b := range [][2]string{{"1", "hash-b"} /* her password changed */, {"2", "hash-a"} /* another user holds the name */, {} /* nobody does */} {
		mu.Lock()
		binding["alice"] = b
		mu.Unlock()
		if ran, err := try(); ran || !errors.Is(err, loginguard.ErrTooManyAttempts) {
			t.Errorf("her token under binding %q: ran %v, %v; want refused as a stranger", b, ran, err)
		}
	}
}
