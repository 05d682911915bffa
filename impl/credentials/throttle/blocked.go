package throttle

import (
	"sync"
	"time"
)

// blockedFor is how long a Limiter remembers, in process, that a key was found blocked: a key
// refused again within it costs no query. Under a flood from one address every refusal would
// otherwise be two or more queries, and they, not the hashes, would keep a real user's login
// waiting for the pool. A second is short enough that an attempt given back meanwhile (Release,
// on this replica or another) is honoured almost at once.
const blockedFor = time.Second

// blockedCache is the in-process memory of blocked keys; the zero value is ready.
type blockedCache struct {
	mu   sync.Mutex
	keys map[string]blockedKey
}

// blockedKey is one remembered refusal: believed until, and the block's own end (RetryAfter).
type blockedKey struct{ until, end time.Time }

// get reports how long key stays blocked, when it was found blocked within blockedFor.
func (c *blockedCache) get(key []byte, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.keys[string(key)]
	if !ok || !b.until.After(now) {
		return 0, false
	}
	return b.end.Sub(now), true
}

// put remembers key as blocked for wait, believed for at most blockedFor.
func (c *blockedCache) put(key []byte, now time.Time, wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[string]blockedKey{}
	}
	if len(c.keys) >= 4096 {
		// Entries live a second: sweeping now and then keeps the map as small as the keys
		// refused in the last second.
		for k, b := range c.keys {
			if !b.until.After(now) {
				delete(c.keys, k)
			}
		}
	}
	c.keys[string(key)] = blockedKey{until: now.Add(min(wait, blockedFor)), end: now.Add(wait)}
}
