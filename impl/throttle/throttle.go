// Package throttle counts failed attempts per key in a fixed window, in memory, so that a login
// endpoint can refuse a key that failed too often. It holds a bounded number of keys, whatever
// the number of distinct keys an attacker sends, and is safe for concurrent use.
//
// A login handler calls Attempt before checking a password (it counts the attempt, or reports the
// key blocked) and Reset when the password was right.
//
// The count is per process: several replicas each count their own attempts.
package throttle

import (
	"container/list"
	"crypto/sha256"
	"sync"
	"time"
)

// Defaults used for zero fields of Options.
const (
	// DefaultMax is the number of failures a key may have in one window before it is blocked.
	DefaultMax = 10
	// DefaultWindow is how long a key's failures are counted, from its first failure; a blocked
	// key stays blocked until its window ends.
	DefaultWindow = 15 * time.Minute
	// DefaultMaxKeys bounds memory: about 150 bytes per key, so 15 MB at most.
	DefaultMaxKeys = 100_000
)

// Options configure a Limiter. Zero fields take the defaults, so a zero Options is the
// production setting; there is no way to turn the limit off.
type Options struct {
	// Max is the number of failures allowed per key in one window; the key is blocked once it
	// reaches Max, for the rest of that window.
	Max int
	// Window is the length of the counting window, starting at the key's first failure.
	Window time.Duration
	// MaxKeys bounds the number of keys held. When a new key would exceed it, expired keys go
	// first, then the oldest key that is not blocked, and only when every key is blocked the
	// oldest blocked key.
	MaxKeys int
	// Now is the clock; nil means time.Now. Tests inject one to move past a window.
	Now func() time.Time
}

// Limiter counts failures per key. The zero value is not usable; call New.
type Limiter struct {
	max     int
	window  time.Duration
	maxKeys int
	now     func() time.Time

	mu   sync.Mutex
	keys map[[sha256.Size]byte]*list.Element
	// counting holds keys below Max and blocked holds keys at Max, each in the order their
	// window started (counting) or they were blocked (blocked), oldest first. Keeping blocked keys
	// apart means a flood of one-off failures under new keys evicts counting keys first: to free a
	// blocked key by eviction an attacker must first block MaxKeys other keys (Max × MaxKeys
	// failed password checks), which takes far longer than waiting out the window.
	counting, blocked list.List
}

// entry is one key's state.
type entry struct {
	key      [sha256.Size]byte
	start    time.Time // first failure of the current window
	failures int
	blocked  bool // in the blocked list
}

// New returns a Limiter with opts, zero fields replaced by the defaults.
func New(opts Options) *Limiter {
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = DefaultMaxKeys
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Limiter{
		max: opts.Max, window: opts.Window, maxKeys: opts.MaxKeys, now: opts.Now,
		keys: make(map[[sha256.Size]byte]*list.Element),
	}
}

// hash is how a key is stored: a fixed 32 bytes, so a caller-chosen key of any length (an account
// name from a request body) costs the same memory.
func hash(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// Blocked reports whether key has reached the limit in its current window, and if so how long
// until the window ends, without counting anything. A blocked key costs the server nothing but
// this lookup. Login handlers use Attempt, which also counts.
func (l *Limiter) Blocked(key string) (retryAfter time.Duration, blocked bool) {
	h := hash(key)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.keys[h]
	if !ok {
		return 0, false
	}
	e := el.Value.(*entry)
	end := e.start.Add(l.window)
	if !now.Before(end) {
		l.remove(el)
		return 0, false
	}
	if e.failures < l.max {
		return 0, false
	}
	return end.Sub(now), true
}

// Attempt is Blocked and, when not blocked, Fail, in one step: it counts the attempt as failed
// before the caller checks the password, and the caller calls Reset when the password is right.
// Login handlers use it instead of Blocked followed by Fail after the check, because that leaves
// a gap the length of a password hash: requests sent at once would all pass Blocked before any
// Fail, and an attacker sending 1,000 requests in parallel would get 1,000 guesses, not Max.
// Here every attempt in flight already counts, so at most Max checks run per window.
func (l *Limiter) Attempt(key string) (retryAfter time.Duration, blocked bool) {
	h := hash(key)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.keys[h]; ok {
		e := el.Value.(*entry)
		if end := e.start.Add(l.window); now.Before(end) && e.failures >= l.max {
			return end.Sub(now), true
		}
	}
	l.fail(h, now)
	return 0, false
}

// Fail records one failed attempt for key. The first failure, or the first after a window has
// ended, starts a new window.
func (l *Limiter) Fail(key string) {
	h := hash(key)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail(h, now)
}

// fail is Fail with l.mu held.
func (l *Limiter) fail(h [sha256.Size]byte, now time.Time) {
	if el, ok := l.keys[h]; ok {
		e := el.Value.(*entry)
		if now.Before(e.start.Add(l.window)) {
			e.failures++
			if e.failures >= l.max && !e.blocked {
				l.counting.Remove(el)
				e.blocked = true
				l.keys[h] = l.blocked.PushBack(e)
			}
			return
		}
		l.remove(el) // expired: start afresh below
	}
	l.makeRoom(now)
	e := &entry{key: h, start: now, failures: 1}
	lst := &l.counting
	if e.failures >= l.max {
		e.blocked, lst = true, &l.blocked
	}
	l.keys[h] = lst.PushBack(e)
}

// Reset forgets key's failures; a successful login calls it (after Attempt counted it).
func (l *Limiter) Reset(key string) {
	h := hash(key)
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.keys[h]; ok {
		l.remove(el)
	}
}

// Len is the number of keys held (expired ones included until they are noticed).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// makeRoom makes space for one more key: it drops expired keys from the front of both lists,
// then, while still full, the oldest counting key, or the oldest blocked key when none counts.
func (l *Limiter) makeRoom(now time.Time) {
	for _, lst := range []*list.List{&l.counting, &l.blocked} {
		for el := lst.Front(); el != nil; el = lst.Front() {
			if now.Before(el.Value.(*entry).start.Add(l.window)) {
				break
			}
			l.remove(el)
		}
	}
	for len(l.keys) >= l.maxKeys {
		el := l.counting.Front()
		if el == nil {
			el = l.blocked.Front()
		}
		l.remove(el)
	}
}

func (l *Limiter) remove(el *list.Element) {
	e := el.Value.(*entry)
	if e.blocked {
		l.blocked.Remove(el)
	} else {
		l.counting.Remove(el)
	}
	delete(l.keys, e.key)
}
