// Package password hashes and checks the passwords of every surface with argon2id (RFC 9106),
// stored in the PHC string format ($argon2id$v=19$m=...,t=...,p=...$salt$key), so the cost can be
// raised later while old hashes keep verifying with the parameters written in them.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Params are argon2id's cost settings.
type Params struct {
	Time    uint32 // passes over memory
	Memory  uint32 // KiB
	Threads uint8  // lanes
}

// Default is the production cost: OWASP's argon2id setting (19 MiB, 2 passes, 1 lane), roughly
// 20-40 ms per hash on one core, which slows offline guessing a great deal.
var Default = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

// Fast is a deliberately weak cost for tests that create many users. Never use it in production.
var Fast = Params{Time: 1, Memory: 64, Threads: 1}

// ErrMalformed reports a stored hash this package refuses to read (see Parse).
var ErrMalformed = errors.New("password: malformed hash")

// ErrBusy reports that every worker is hashing and the wait queue is full: the call was refused at
// once, before taking any memory, so a flood of logins is shed instead of piling up goroutines
// that each wait to allocate Params.Memory. Callers answer it with "try again shortly" (503): the
// whole hashing capacity is taken.
var ErrBusy = errors.New("password: hasher busy")

// ErrClientBusy reports that the call's client (WithClient) already has its share of the hasher
// in use and as many calls again waiting for it: that client is over its fair share, while the
// hasher may well have room for others. Callers answer it with 429 Too Many Requests (RFC 6585).
var ErrClientBusy = errors.New("password: too many calls from this client at once")

const (
	saltLen = 16
	keyLen  = 32
)

// Hasher hashes and verifies passwords. It runs at most a few argon2 computations at once: each
// one holds Params.Memory, so a burst of logins must neither exhaust memory nor starve other
// requests.
type Hasher struct {
	p   Params
	sem chan struct{}
	// prio is the one extra worker of priority calls (WithPriority).
	prio chan struct{}
	// waiting counts calls queued for a worker; at most queue may wait, the rest get ErrBusy.
	waiting atomic.Int64
	queue   int64
	// admitted counts the requests holding a place taken by Admit; at most workers+queue.
	admitted atomic.Int64
	// dummy is what an unknown user's password is checked against, so an unknown account costs
	// the same time as a wrong password and the two cannot be told apart by timing.
	dummy Hash

	// perClient bounds the calls one client (WithClient) may have running, queued or admitted at
	// once; clientLine bounds the calls of one client waiting for one of those places, and
	// linesMax the calls waiting so over all clients.
	perClient  int
	clientLine int
	linesMax   int
	mu         sync.Mutex
	clients    map[string]*client // clients with a place or a call waiting for one
	lines      int                // calls waiting in every client's line
}

// client is one client's share of a Hasher: held counts the calls that have one of its places,
// line the calls waiting for one (in arrival order), refs both, so the entry lives exactly while
// used.
type client struct {
	held    int
	line    []*waiter
	waiting int // waiters without a sub-line
	refs    int
	// sublines counts the calls waiting per sub-line (WithSubLine), active those holding a place.
	sublines map[string]int
	active   map[string]int
}

// waiter is one call waiting in its client's line; ready is closed when a place is handed to it.
type waiter struct {
	sub   string
	ready chan struct{}
	given bool
}

// DefaultClientLine is how many calls of one client may wait for its share of a Hasher beyond
// those that hold it: people who arrive together from one address (an office behind NAT) are
// queued and served in turn, and only a client with more than that at once is refused.
const DefaultClientLine = 16

type clientKey struct{}

// WithClient tags ctx with the client (a network address) the hashes of a request are made for.
// A Hasher lets one client hold at most a fifth of its workers and queue places (at least one);
// the client's further calls wait in its own line (DefaultClientLine long) for one of those places,
// and beyond that are refused with ErrClientBusy. So logins that arrive together from one address
// are all served in turn, one host flooding logins or registrations is shed, and other clients'
// calls still find room; without it, a single attacker keeps the queue full and every real user is
// shed too. Calls on an untagged context are limited only by the queue.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// New returns a Hasher using p for new hashes, running at most GOMAXPROCS (at least 2) hashes at
// once with up to four times as many calls waiting for a turn.
func New(p Params) *Hasher {
	w := max(2, runtime.GOMAXPROCS(0))
	return NewSized(p, w, 4*w)
}

// NewSized is New with an explicit number of workers (at least 1) and wait-queue length (at least
// 0). With workers*Memory bounding hashing memory and queue bounding waiting goroutines, a flood
// costs at most that much; calls beyond it get ErrBusy.
func NewSized(p Params, workers, queue int) *Hasher {
	places := max(1, workers) + max(0, queue)
	h := &Hasher{p: p, sem: make(chan struct{}, max(1, workers)), prio: make(chan struct{}, 1), queue: int64(max(0, queue)),
		perClient: max(1, places/5), clientLine: DefaultClientLine, linesMax: 16 * places,
		clients: map[string]*client{}}
	// The dummy's key is random rather than derived: Verify derives a key from the guess with the
	// dummy's salt and parameters either way (the same work as for a real user) and reports false
	// for an unknown user whatever the comparison says, so deriving one here would only cost every
	// start an argon2 hash (most of a second under -race).
	salt, key := make([]byte, saltLen), make([]byte, keyLen)
	if _, err := rand.Read(salt); err != nil {
		panic(err) // crypto/rand failing leaves nothing sensible to do
	}
	_, _ = rand.Read(key)
	h.dummy = Hash{Params: p, Salt: salt, Key: key}
	return h
}

// WithPriority marks ctx's hashes as a known device's (impl/credentials/loginguard: a client that
// signed in to the account before). Such a call does not queue behind strangers' hashes: besides
// the workers it may take the Hasher's one priority worker, whichever frees first, and Admit
// admits it outside the strangers' count. So guessers filling the hasher from the device's address
// or from anywhere delay a device's login by at most one hash. Their number stays bounded: the
// devices at one address share one client's places (WithClient), whatever their accounts, and the priority worker adds one
// hash's memory to the hasher's bound.
func WithPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, priorityKey{}, true)
}

type priorityKey struct{}

func prior(ctx context.Context) bool { return ctx.Value(priorityKey{}) != nil }

// acquire takes a worker: at once if one is free, else after waiting in the queue, else (queue
// full) not at all, with ErrBusy; a priority call (WithPriority) takes the first free of a worker
// and the priority worker, without queueing. release gives back what was taken.
func (h *Hasher) acquire(ctx context.Context) (release func(), err error) {
	worker := func() { <-h.sem }
	if prior(ctx) {
		select {
		case h.sem <- struct{}{}:
			return worker, nil
		case h.prio <- struct{}{}:
			return func() { <-h.prio }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case h.sem <- struct{}{}:
		return worker, nil
	default:
	}
	if h.waiting.Add(1) > h.queue {
		h.waiting.Add(-1)
		return nil, ErrBusy
	}
	defer h.waiting.Add(-1)
	select {
	case h.sem <- struct{}{}:
		return worker, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Admit takes, ahead of a call that comes later in the same request, a place for it: first one of
// the client's own (waiting in its line while they are taken, ErrClientBusy when that is full),
// then one of the hasher's; it refuses with ErrBusy when the worker queue is full or as many
// requests as the hasher has workers and queue places already hold one. A login
// handler admits itself before any database work (the throttle, the account's row) and calls done
// when it has answered; the hash calls made on the returned context use the place taken here and
// are not counted for the client a second time.
//
// Without it, the check before the database work is stale: under a flood, logins that passed it
// are still waiting for database connections, not yet counted by the hasher, so every flooding
// connection passes and piles up in front of the pool, where a real user's login then waits
// seconds behind them. With it, the logins doing database work at once are at most workers+queue
// per hasher, and at most a client's share of those per client.
func (h *Hasher) Admit(ctx context.Context) (admitted context.Context, done func(), err error) {
	if prior(ctx) {
		// A known device's login: its client's places bound it; strangers' count does not.
		leave, err := h.enter(ctx)
		if err != nil {
			return ctx, func() {}, err
		}
		var once sync.Once
		return context.WithValue(ctx, admissionKey{h}, true), func() { once.Do(leave) }, nil
	}
	if len(h.sem) == cap(h.sem) && h.waiting.Load() >= h.queue {
		return ctx, func() {}, ErrBusy
	}
	leave, err := h.enter(ctx)
	if err != nil {
		return ctx, func() {}, err
	}
	if h.admitted.Add(1) > int64(cap(h.sem))+h.queue {
		h.admitted.Add(-1)
		leave()
		return ctx, func() {}, ErrBusy
	}
	var once sync.Once
	done = func() {
		once.Do(func() {
			h.admitted.Add(-1)
			leave()
		})
	}
	return context.WithValue(ctx, admissionKey{h}, true), done, nil
}

// admissionKey marks a context admitted by one Hasher (Admit).
type admissionKey struct{ h *Hasher }

// take is enter then acquire: a worker for ctx's client, released by release. A call on a
// context this Hasher admitted is already counted for its client.
func (h *Hasher) take(ctx context.Context) (release func(), err error) {
	leave := func() {}
	if ctx.Value(admissionKey{h}) == nil {
		var err error
		if leave, err = h.enter(ctx); err != nil {
			return nil, err
		}
	}
	worker, err := h.acquire(ctx)
	if err != nil {
		leave()
		return nil, err
	}
	return func() { worker(); leave() }, nil
}

// Hold takes a worker as a hash would (waiting in the queue, or ErrBusy) and keeps it until
// release is called. Tests use it to fill a small hasher deterministically, without timing.
func (h *Hasher) Hold(ctx context.Context) (release func(), err error) {
	return h.take(ctx)
}

// Waiting reports how many calls are queued for a worker right now, for metrics: a queue that
// stays near its length means logins are being shed with ErrBusy.
func (h *Hasher) Waiting() int { return int(h.waiting.Load()) }

// Lines reports how many calls wait in their clients' lines for one of the client's places (not
// yet for a worker: Waiting): a client over its share waits there.
func (h *Hasher) Lines() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lines
}

// Hash returns the PHC-format argon2id hash of pw with a fresh random salt.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	salt, err := newSalt()
	if err != nil {
		return "", err
	}
	release, err := h.take(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	ph := Hash{Params: h.p, Salt: salt}
	ph.Key = ph.derive([]byte(pw), keyLen)
	return ph.String(), nil
}

// Verify reports whether pw matches stored, comparing in constant time. An empty stored hash (an
// unknown user) is checked against a dummy hash, spending the same time, and reports false. A
// stored hash that Parse refuses gives ErrMalformed without any hashing: its parameters could
// make argon2 panic (t=0, p=0) or allocate without bound.
func (h *Hasher) Verify(ctx context.Context, stored, pw string) (bool, error) {
	ph, unknown := h.dummy, stored == ""
	if !unknown {
		var err error
		if ph, err = Parse(stored); err != nil {
			return false, err
		}
	}
	release, err := h.take(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	got := ph.derive([]byte(pw), uint32(len(ph.Key)))
	return subtle.ConstantTimeCompare(got, ph.Key) == 1 && !unknown, nil
}

func newSalt() ([]byte, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("password: salt: %w", err)
	}
	return salt, nil
}
