package password

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

func TestPassword_HashVerifies(t *testing.T) {
	h := New(Fast)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct-horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not a PHC argon2id string with the configured cost", stored)
	}
	if strings.Contains(stored, "correct-horse") {
		t.Fatal("hash contains the password")
	}
	for _, c := range []struct {
		pw   string
		want bool
	}{{"correct-horse", true}, {"correct-horsE", false}, {"", false}, {"correct-horse ", false}} {
		ok, err := h.Verify(ctx, stored, c.pw)
		if err != nil || ok != c.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", c.pw, ok, err, c.want)
		}
	}
}

func TestPassword_DefaultCost(t *testing.T) {
	stored, err := New(Default).Hash(context.Background(), "pw")
	if err != nil || !strings.HasPrefix(stored, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("default hash %q, %v", stored, err)
	}
}

func TestPassword_SaltedPerHash(t *testing.T) {
	h := New(Fast)
	a, _ := h.Hash(context.Background(), "same")
	b, _ := h.Hash(context.Background(), "same")
	if a == b {
		t.Fatal("two hashes of one password are equal: salt is not random")
	}
}

func TestPassword_OldParamsStillVerify(t *testing.T) {
	stored, _ := New(Fast).Hash(context.Background(), "pw-12345")
	ok, err := New(Params{Time: 2, Memory: 128, Threads: 1}).Verify(context.Background(), stored, "pw-12345")
	if err != nil || !ok {
		t.Fatalf("hash made with other params: ok=%v err=%v", ok, err)
	}
}

func TestPassword_UnknownUserIsFalse(t *testing.T) {
	for _, pw := range []string{"anything", "no such user: constant-time filler"} {
		ok, err := New(Fast).Verify(context.Background(), "", pw)
		if err != nil || ok {
			t.Fatalf("empty stored hash with %q: ok=%v err=%v", pw, ok, err)
		}
	}
}

func TestPassword_CancelledContext(t *testing.T) {
	h := New(Fast)
	stored, _ := h.Hash(context.Background(), "pw")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Fill the slots so the call has to wait, and sees its context is done.
	for range cap(h.sem) {
		h.sem <- struct{}{}
	}
	if _, err := h.Verify(ctx, stored, "pw"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify with a cancelled context: %v", err)
	}
	if _, err := h.Hash(ctx, "pw"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash with a cancelled context: %v", err)
	}
}

// A corrupt stored hash is refused before argon2 sees it: t=0 and p=0 make argon2.IDKey panic,
// and a huge m would allocate that much.
func TestPassword_MalformedStoredHash(t *testing.T) {
	const salt, key = "c2FsdHNhbHRzYWx0", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5"
	for name, s := range map[string]string{
		"plain":            "plain",
		"empty fields":     "$$$$$",
		"argon2i":          "$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"old version":      "$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + key,
		"t=0":              "$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key,
		"p=0":              "$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"m below 8p":       "$argon2id$v=19$m=7,t=1,p=1$" + salt + "$" + key,
		"m huge":           "$argon2id$v=19$m=4194304,t=1,p=1$" + salt + "$" + key,
		"t huge":           "$argon2id$v=19$m=64,t=100000,p=1$" + salt + "$" + key,
		"p over uint8":     "$argon2id$v=19$m=4096,t=1,p=257$" + salt + "$" + key,
		"negative":         "$argon2id$v=19$m=-64,t=1,p=1$" + salt + "$" + key,
		"leading zero":     "$argon2id$v=19$m=064,t=1,p=1$" + salt + "$" + key,
		"plus sign":        "$argon2id$v=19$m=+64,t=1,p=1$" + salt + "$" + key,
		"order swapped":    "$argon2id$v=19$t=1,m=64,p=1$" + salt + "$" + key,
		"trailing text":    "$argon2id$v=19$m=64,t=1,p=1x$" + salt + "$" + key,
		"extra field":      "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
		"padded base64":    "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "=",
		"no salt":          "$argon2id$v=19$m=64,t=1,p=1$$" + key,
		"short key":        "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$a2V5",
		"empty key":        "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$",
		"bad base64":       "$argon2id$v=19$m=64,t=1,p=1$" + salt + "$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V*",
		"noncanonical b64": "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHRzYWx0c$" + key,
		"newline in salt":  "$argon2id$v=19$m=64,t=1,p=1$c2Fsd\nHNhbHRzYWx0$" + key,
		"leading space":    " $argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(s); err != ErrMalformed {
				t.Fatalf("Parse(%q) = %v, want ErrMalformed", s, err)
			}
			if ok, err := New(Fast).Verify(context.Background(), s, "x"); ok || err != ErrMalformed {
				t.Fatalf("Verify against %q = %v, %v; want ErrMalformed", s, ok, err)
			}
		})
	}
}

func TestPassword_ParseRoundTrip(t *testing.T) {
	stored, _ := New(Params{Time: 3, Memory: 256, Threads: 2}).Hash(context.Background(), "pw")
	h, err := Parse(stored)
	if err != nil {
		t.Fatal(err)
	}
	if h.Time != 3 || h.Memory != 256 || h.Threads != 2 || len(h.Salt) != saltLen || len(h.Key) != keyLen {
		t.Fatalf("parsed %+v", h)
	}
	if h.String() != stored {
		t.Fatalf("String() = %q, want %q", h.String(), stored)
	}
}

// TestPassword_BusyWhenQueueFull fills the one worker and the two queue places of a real hasher:
// further calls are refused with ErrBusy at once, and the queued ones complete once the worker
// is free, so a flood is shed rather than piled up.
func TestPassword_BusyWhenQueueFull(t *testing.T) {
	const workers, queue, extra = 1, 2, 5
	h := NewSized(Fast, workers, queue)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "pw")
	if err != nil {
		t.Fatal(err)
	}
	// Hold the only worker as a long hash would.
	if _, err := h.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, queue)
	for i := 0; i < queue; i++ {
		go func(i int) {
			if i%2 == 0 {
				_, err := h.Hash(ctx, "pw")
				queued <- err
			} else {
				ok, err := h.Verify(ctx, stored, "pw")
				if err == nil && !ok {
					err = errors.New("queued Verify reported a wrong password")
				}
				queued <- err
			}
		}(i)
	}
	for h.Waiting() < queue {
		runtime.Gosched()
	}
	for i := 0; i < extra; i++ {
		if _, err := h.Hash(ctx, "pw"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Hash beyond capacity: err %v, want ErrBusy", err)
		}
		if _, err := h.Verify(ctx, stored, "pw"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Verify beyond capacity: err %v, want ErrBusy", err)
		}
		if _, err := h.Verify(ctx, "", "pw"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Verify of an unknown user beyond capacity: err %v, want ErrBusy", err)
		}
	}
	if got := h.Waiting(); got != queue {
		t.Fatalf("Waiting() = %d after refusals, want %d", got, queue)
	}
	<-h.sem // the held worker finishes
	for i := 0; i < queue; i++ {
		if err := <-queued; err != nil {
			t.Fatalf("queued call: %v", err)
		}
	}
	if got := h.Waiting(); got != 0 {
		t.Fatalf("Waiting() = %d when idle, want 0", got)
	}
	if _, err := h.Hash(ctx, "pw"); err != nil {
		t.Fatalf("Hash after the flood: %v", err)
	}
}

// TestPassword_QueuedCallHonoursContext: a caller that gives up while queued leaves the queue.
func TestPassword_QueuedCallHonoursContext(t *testing.T) {
	h := NewSized(Fast, 1, 1)
	if _, err := h.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := h.Hash(ctx, "pw"); done <- err }()
	for h.Waiting() < 1 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled queued Hash: %v, want context.Canceled", err)
	}
	if got := h.Waiting(); got != 0 {
		t.Fatalf("Waiting() = %d after the caller left, want 0", got)
	}
}

// TestPassword_PerClient: one client holds at most a fifth of the workers and queue places; with
// no line to wait in, its next call is refused with ErrClientBusy at once, while another client's
// call and an untagged one still get a worker. A call that finishes gives its client's place back.
func TestPassword_PerClient(t *testing.T) {
	h := NewSized(Fast, 2, 8) // 10 places: 2 per client
	h.SetClientLine(0)
	attacker := WithClient(context.Background(), "192.0.2.1")
	var held []func()
	for range 2 {
		release, err := h.Hold(attacker)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	if _, err := h.Verify(attacker, "", "pw"); !errors.Is(err, ErrClientBusy) {
		t.Fatalf("the client's third call: %v, want ErrClientBusy", err)
	}
	held[0]() // both workers were the attacker's; one is free now
	if _, err := h.Hash(WithClient(context.Background(), "198.51.100.7"), "pw"); err != nil {
		t.Fatalf("another client: %v", err)
	}
	if _, err := h.Hash(attacker, "pw"); err != nil {
		t.Fatalf("the client after one of its calls finished: %v", err)
	}
	if _, err := h.Hash(context.Background(), "pw"); err != nil {
		t.Fatalf("an untagged call: %v", err)
	}
	held[1]()
	if n := len(h.clients); n != 0 {
		t.Fatalf("%d clients still counted when idle", n)
	}
}

// admits reports whether Admit gives ctx a place, giving it back at once.
func admits(h *Hasher, ctx context.Context) bool {
	_, done, err := h.Admit(ctx)
	done()
	return err == nil
}

// TestPassword_Admit: Admit refuses what the call would be refused (the client's share, the
// queue full), and a place it gives counts until done: per client, and for the whole hasher at
// workers+queue, so requests admitted but not yet hashing (doing database work) cannot pile up.
func TestPassword_Admit(t *testing.T) {
	h := NewSized(Fast, 1, 4) // 5 places: 1 per client
	h.SetClientLine(0)
	a, b := WithClient(context.Background(), "a"), WithClient(context.Background(), "b")
	release, err := h.Hold(a)
	if err != nil {
		t.Fatal(err)
	}
	if admits(h, a) || !admits(h, b) || !admits(h, context.Background()) {
		t.Fatalf("one call of a running: Admit(a, b, untagged) = %v %v %v, want false true true",
			admits(h, a), admits(h, b), admits(h, context.Background()))
	}
	release()

	// An admitted request holds its client's share before it hashes, and its own hash uses it.
	actx, done, err := h.Admit(a)
	if err != nil {
		t.Fatal(err)
	}
	if admits(h, a) {
		t.Fatal("a admitted twice with a share of one")
	}
	if _, err := h.Hash(actx, "pw"); err != nil {
		t.Fatalf("the admitted request's own hash: %v", err)
	}
	if _, err := h.Hash(a, "pw"); !errors.Is(err, ErrClientBusy) {
		t.Fatalf("another call of a while it is admitted: %v, want ErrClientBusy", err)
	}
	done()
	done() // twice is harmless
	if !admits(h, a) {
		t.Fatal("a is refused after its admitted request finished")
	}

	// Untagged requests are bounded by workers+queue places in all.
	var dones []func()
	for i := range 5 {
		_, d, err := h.Admit(context.Background())
		if err != nil {
			t.Fatalf("admission %d of 5: %v", i+1, err)
		}
		dones = append(dones, d)
	}
	if admits(h, context.Background()) || admits(h, b) {
		t.Fatal("admitted beyond workers+queue")
	}
	for _, d := range dones {
		d()
	}

	// The worker and every queue place taken: nobody is admitted.
	hold, err := h.Hold(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wait := make(chan struct{})
	for range 4 {
		go func() {
			r, err := h.Hold(context.Background())
			if err == nil {
				r()
			}
			wait <- struct{}{}
		}()
	}
	for h.Waiting() < 4 {
		runtime.Gosched()
	}
	if admits(h, b) || admits(h, context.Background()) {
		t.Fatal("admitted with the queue full")
	}
	hold()
	for range 4 {
		<-wait
	}
}

// TestPassword_ClientLine: calls of one client beyond its share wait in its line and are all
// served in turn (ten logins at once from one office behind NAT); the one that finds the line
// full is refused with ErrClientBusy at once, while another client still gets a worker; and once
// every client's lines are full, ErrBusy says the hasher itself is out of room.
func TestPassword_ClientLine(t *testing.T) {
	h := NewSized(Fast, 2, 8) // 2 places per client
	h.SetClientLine(8)
	office := WithClient(context.Background(), "203.0.113.9")
	var held []func()
	for range 2 {
		release, err := h.Hold(office)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	done := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := h.Hash(office, "pw")
			done <- err
		}()
	}
	waiting := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.lines
	}
	for waiting() < 8 {
		runtime.Gosched()
	}
	if _, err := h.Hash(office, "pw"); !errors.Is(err, ErrClientBusy) {
		t.Fatalf("the call beyond the client's line: %v, want ErrClientBusy", err)
	}
	for _, release := range held {
		release()
	}
	for i := range 8 {
		if err := <-done; err != nil {
			t.Fatalf("waiting call %d: %v", i+1, err)
		}
	}
	if n := len(h.clients); n != 0 {
		t.Fatalf("%d clients still counted when idle", n)
	}

	// Every line full: the hasher as a whole has no room left.
	h.linesMax = 1
	release, err := h.Hold(office)
	if err != nil {
		t.Fatal(err)
	}
	release2, err := h.Hold(office)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(office)
	go func() { _, err := h.Hash(ctx, "pw"); done <- err }()
	for waiting() < 1 {
		runtime.Gosched()
	}
	if _, err := h.Hash(office, "pw"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a call with every line full: %v, want ErrBusy", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled waiting call: %v, want context.Canceled", err)
	}
	release()
	release2()
	if n := len(h.clients); n != 0 {
		t.Fatalf("%d clients still counted when idle", n)
	}
}

// TestHasher_PriorityDoesNotQueueBehindStrangers: with every worker held and the queue full of
// strangers' hashes, a priority call (a known device's) is admitted and hashes at once on the
// priority worker, while a stranger is refused with ErrBusy.
func TestHasher_PriorityDoesNotQueueBehindStrangers(t *testing.T) {
	h := NewSized(Fast, 1, 0)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "pw")
	if err != nil {
		t.Fatal(err)
	}
	release, err := h.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := h.Verify(ctx, stored, "pw"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a stranger with the worker held: %v, want ErrBusy", err)
	}
	pctx, done, err := h.Admit(WithPriority(WithClient(ctx, "device")))
	if err != nil {
		t.Fatalf("priority admission: %v", err)
	}
	defer done()
	if ok, err := h.Verify(pctx, stored, "pw"); !ok || err != nil {
		t.Fatalf("priority verify with the worker held: %v %v, want true", ok, err)
	}
}

// TestPassword_SubLineWithFewestCallsFirst: a place given back goes to the waiting sub-line with
// the fewest calls holding or waiting, the earliest of those; a waiter whose context ends leaves
// the line without keeping a place; and the client is forgotten once idle.
func TestPassword_SubLineWithFewestCallsFirst(t *testing.T) {
	h := NewSized(Fast, 1, 4) // 5 places: 1 per client
	at := WithClient(context.Background(), "198.51.100.7")
	release, err := h.Hold(WithSubLine(at, "flood"))
	if err != nil {
		t.Fatal(err)
	}
	lines := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.lines
	}
	order := make(chan string, 4)
	join := func(ctx context.Context, sub string, n int) {
		go func() {
			r, err := h.Hold(WithSubLine(ctx, sub))
			if err != nil {
				order <- sub + " " + err.Error()
				return
			}
			order <- sub
			r()
		}()
		for lines() < n {
			runtime.Gosched()
		}
	}
	join(at, "flood", 1)
	join(at, "flood", 2)
	gone, cancel := context.WithCancel(at)
	join(gone, "gone", 3)
	join(at, "one", 4)
	cancel()
	if got := <-order; got != "gone "+context.Canceled.Error() {
		t.Fatalf("the cancelled waiter: %q", got)
	}
	release()
	// "one" (1 call) goes before "flood" (1 holding or about to, 2 waiting), though it came last;
	// then the flood's two in turn.
	for i, want := range []string{"one", "flood", "flood"} {
		if got := <-order; got != want {
			t.Fatalf("place %d went to %q, want %q", i+1, got, want)
		}
	}
	clients := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.clients)
	}
	for deadline := time.Now().Add(patience.Bound(10 * time.Second)); clients() != 0; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients still counted when idle", clients())
		}
	}
}
