// Package throttletest gives tests of login throttling a clock they move by hand, so a test can
// step past a limiter's window without waiting for it, and the scenarios every surface's password
// login must pass (Run), so each surface's test states only how to drive its login.
package throttletest

import (
	"sync/atomic"
	"time"
)

// Clock is a settable clock, safe for concurrent reads: pass its Now as throttle.Options.Now.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a Clock set to a fixed instant, so failures in a test are reproducible.
func NewClock() *Clock {
	c := &Clock{}
	c.ns.Store(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC).UnixNano())
	return c
}

// Now is the clock's current time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
