// Package windowcount is the one in-process fixed-window counter of the limits that run without a
// database (the auth library's failed-login guard, loginlimit.Memory, and its confirmation-mail
// limiter, provider.NewMemorySendLimiter): per key, a count that starts a window at its first
// reservation and is refused at its limit until the window ends. The reference server counts the
// same limits in PostgreSQL (impl/credentials/throttle), shared by its replicas.
package windowcount

import (
	"sync"
	"time"
)

// Counter counts reservations per key in fixed windows. It is safe for concurrent use.
type Counter struct {
	window time.Duration
	now    func() time.Time

	mu        sync.Mutex
	counts    map[string]*count
	lastSweep time.Time
}

type count struct {
	n   int
	end time.Time
}

// New returns a Counter of windows of length window; now is the clock (nil: time.Now).
func New(window time.Duration, now func() time.Time) *Counter {
	if now == nil {
		now = time.Now
	}
	return &Counter{window: window, now: now, counts: map[string]*count{}}
}

// Limit is one key and the most reservations it may have in a window.
type Limit struct {
	Key string
	Max int
}

// Reservation is one reservation counted under each of its keys, to give back (Release) or to
// end the keys' windows with (Forget).
type Reservation struct {
	c      *Counter
	keys   []string
	counts []*count
}

// Reserve counts one reservation under every key of limits, or, when any key is at its Max in a
// window that has not ended, none, and returns how long until the last such window ends (wait >
// 0). Keys whose window ended start a new one.
func (c *Counter) Reserve(limits ...Limit) (r Reservation, wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	// Ended windows are dropped at most once a second, so a flood of fresh keys costs one pass
	// over the map a second rather than one per reservation.
	if now.Sub(c.lastSweep) >= time.Second {
		c.lastSweep = now
		for k, e := range c.counts {
			if !now.Before(e.end) {
				delete(c.counts, k)
			}
		}
	}
	for _, l := range limits {
		if e := c.counts[l.Key]; e != nil && now.Before(e.end) && e.n >= l.Max {
			wait = max(wait, e.end.Sub(now))
		}
	}
	if wait > 0 {
		return Reservation{}, wait
	}
	r = Reservation{c: c}
	for _, l := range limits {
		e := c.counts[l.Key]
		if e == nil || !now.Before(e.end) {
			e = &count{end: now.Add(c.window)}
			c.counts[l.Key] = e
		}
		e.n++
		r.keys, r.counts = append(r.keys, l.Key), append(r.counts, e)
	}
	return r, 0
}

// Release gives the reservation back under each key whose window is still the one it was
// counted in.
func (r Reservation) Release() {
	r.each(func(k string, e *count) { e.n-- })
}

// Forget ends the window of each key the reservation was counted in (a success forgets the
// key's failures), unless a new one has started since.
func (r Reservation) Forget() {
	r.each(func(k string, e *count) { delete(r.c.counts, k) })
}

func (r Reservation) each(f func(string, *count)) {
	if r.c == nil {
		return
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	for i, k := range r.keys {
		if r.c.counts[k] == r.counts[i] {
			f(k, r.counts[i])
		}
	}
}
