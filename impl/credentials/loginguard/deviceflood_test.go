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
)

// TestGuard_DevicesShareTheirAddressPlace: issue 44's device flood. Eight accounts signed in once
// from one address, then 32 logins at once with their right passwords and device tokens, each
// holding its hash: they share one client's places at the hasher (a fifth of it), not one per
// account, so the excess is refused (password.ErrClientBusy, a 429) and a device login from
// another address finds a worker at once. Before, each account brought its own share and the
// flood held every worker and the priority one. Each account waits in a line of its own, so a real
// user's device at the flooding address is not refused with the flood but served in turn.
func TestGuard_DevicesShareTheirAddressPlace(t *testing.T) {
	t.Parallel()
	h := password.NewSized(password.Fast, 2, 8) // 10 places: 2 per client
	g := loginguard.New(h, throttle.New(dbtest.New(t), throttle.Options{}), errWrong, device.NewSigner([]byte("k"), "test", 0, nil))
	ctx := context.Background()
	const farm, victimAt = "198.51.100.50:1", "192.0.2.60:1"
	hashing := func(inside *atomic.Int32, done <-chan struct{}) func(context.Context) error {
		return func(ctx context.Context) error {
			release, err := h.Hold(ctx) // the hash, held until done
			if err != nil {
				return err
			}
			defer release()
			inside.Add(1)
			<-done
			return nil
		}
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
	done := make(chan struct{})
	var inside, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.LoginDevice(ctx, fmt.Sprintf("farmed-%d", i%8), farm, tokens[i%8], hashing(&inside, done))
			if errors.Is(err, password.ErrClientBusy) {
				refused.Add(1)
			}
		}()
	}
	closed := false
	defer func() {
		if !closed {
			close(done)
		}
		wg.Wait()
	}()
	// The flood settles: its place holders hashing, its line full, the rest refused.
	for deadline := time.Now().Add(time.Minute); inside.Load()+refused.Load() < 2+14; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flood did not settle: %d hashing, %d refused", inside.Load(), refused.Load())
		}
	}
	if n := inside.Load(); n > 2 {
		t.Fatalf("%d device logins of one address hashing at once, want at most its share of 2", n)
	}
	var victim atomic.Int32
	in := make(chan error, 1)
	go func() {
		_, err := g.LoginDevice(ctx, "victim", victimAt, tok, hashing(&victim, done))
		in <- err
	}()
	for deadline := time.Now().Add(time.Minute); victim.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the victim's device login found no worker within a minute while the flood held %d", inside.Load())
		}
	}
	if n := inside.Load(); n > 2 {
		t.Errorf("%d device logins of the flooding address hashing, want at most 2", n)
	}
	// A real user's device at the flooding address waits in a line of her account's own, not
	// behind the farmed accounts' full lines: she is served once the flood's hashes end.
	var neighbour atomic.Int32
	go func() {
		_, err := g.LoginDevice(ctx, "neighbour", farm, neighbourTok, hashing(&neighbour, done))
		in <- err
	}()
	select {
	case err := <-in:
		t.Fatalf("the neighbour's device login at the flooding address answered %v before the flood ended, want it waiting its turn", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(done)
	closed = true
	for range 2 {
		if err := <-in; err != nil {
			t.Errorf("a device login beside the flood: %v, want in", err)
		}
	}
}
