package loginguard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestGuard_DevicesShareTheirAddressPlace: issue 44's device flood. Eight accounts signed in once
// from one address, then 32 logins at once with their right passwords and device tokens, each
// holding its hash: they share one client's places at the hasher (a fifth of it), not one per
// account, so the excess is refused (password.ErrClientBusy, a 429) and a device login from
// another address finds a worker at once. Before, each account brought its own share and the
// flood held every worker and the priority one. A real user's device at the flooding address is
// neither refused with the flood nor queued behind it: the first place the flood gives back is
// hers, so she waits for one hash, however many of the flood's logins wait (before, she waited
// behind the farmed accounts' 16 waiting logins: about 3 s in make abuse-fairness).
func TestGuard_DevicesShareTheirAddressPlace(t *testing.T) {
	t.Parallel()
	h := password.NewSized(password.Fast, 2, 8) // 10 places: 2 per client
	g := loginguard.New(h, throttle.New(dbtest.New(t), throttle.Options{}), errWrong, device.NewSigner([]byte("k"), "test", 0, nil))
	ctx := context.Background()
	const farm, victimAt = "198.51.100.50:1", "192.0.2.60:1"
	// one ends one flood hash per send; done ends every hash.
	one, done := make(chan struct{}), make(chan struct{})
	var started, running, most atomic.Int32 // the flood's hashes: begun, under way, most at once
	hashing := func(began *atomic.Int32, end <-chan struct{}) func(context.Context) error {
		return func(ctx context.Context) error {
			release, err := h.Hold(ctx) // the hash, held until ended
			if err != nil {
				return err
			}
			defer release()
			began.Add(1)
			select {
			case <-end:
			case <-done:
			}
			return nil
		}
	}
	flood := func(ctx context.Context) error {
		release, err := h.Hold(ctx)
		if err != nil {
			return err
		}
		defer release()
		started.Add(1)
		if n := running.Add(1); n > most.Load() {
			most.Store(n)
		}
		defer running.Add(-1)
		select {
		case <-one:
		case <-done:
		}
		return nil
	}
	tokens := make([]string, 8)
	for i := range tokens {
		tok, err := g.LoginDevice(ctx, fmt.Sprintf("farmed-%d", i), farm, "", func(context.Context) error { return nil })
		if err != nil || tok == "" {
			t.Fatalf("farmed account %d: %q %v", i, tok, err)
		}
		tokens[i] = tok
	}
	tok, err := g.LoginDevice(ctx, "victim", victimAt, "", func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	neighbourTok, err := g.LoginDevice(ctx, "neighbour", farm, "", func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			_, err := g.LoginDevice(ctx, fmt.Sprintf("farmed-%d", i%8), farm, tokens[i%8], flood)
			if errors.Is(err, password.ErrClientBusy) {
				refused.Add(1)
			}
		})
	}
	closed := false
	defer func() {
		if !closed {
			close(done)
		}
		wg.Wait()
	}()
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(patience.Bound(time.Minute)); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d flood hashes begun, %d under way, %d refused, %d in lines", what, started.Load(), running.Load(), refused.Load(), h.Lines())
			}
		}
	}
	// The flood settles: its two places hashing, each account's line of 2 full, the rest refused.
	wait("the flood did not settle", func() bool { return started.Load() == 2 && h.Lines() == 16 && refused.Load() == 14 })
	var victim atomic.Int32
	in := make(chan error, 2)
	go func() {
		_, err := g.LoginDevice(ctx, "victim", victimAt, tok, hashing(&victim, done))
		in <- err
	}()
	wait("the victim's device login elsewhere found no worker while the flood held its places", func() bool { return victim.Load() == 1 })
	// A real user's device at the flooding address joins the 16 waiting logins of the farmed
	// accounts; then the flood's hashes end one at a time, and the number that begin before hers
	// is what she waited for beyond the one hash whose place she took.
	var neighbour atomic.Int32
	go func() {
		_, err := g.LoginDevice(ctx, "neighbour", farm, neighbourTok, hashing(&neighbour, done))
		in <- err
	}()
	wait("the neighbour's device login did not join the address's line", func() bool { return h.Lines() == 17 })
	ahead := 0
	for neighbour.Load() == 0 {
		before := started.Load()
		one <- struct{}{} // one flood hash ends
		wait("neither the neighbour nor the flood took the place given back", func() bool {
			return neighbour.Load() == 1 || started.Load() > before
		})
		if neighbour.Load() == 0 {
			ahead++
		}
		if ahead > 32 {
			t.Fatalf("the neighbour's device login never began while %d flood hashes did", ahead)
		}
	}
	if ahead != 0 {
		t.Errorf("%d of the flood's hashes began before the neighbour's device login at the flooding address, want 0 (she waits for one hash)", ahead)
	}
	close(done)
	closed = true
	for range 2 {
		if err := <-in; err != nil {
			t.Errorf("a device login beside the flood: %v, want in", err)
		}
	}
	wg.Wait()
	if n := most.Load(); n > 2 {
		t.Errorf("%d device logins of the flooding address hashed at once, want at most its share of 2", n)
	}
}
