package windowcount

import (
	"testing"
	"time"
)

// TestCounter_FixedWindows: a key takes Max reservations in its window, then waits until the
// window ends; a release gives one back, a forget ends the window; several keys are reserved all
// or none, the wait being the last blocking window's end; a window that ended starts afresh.
func TestCounter_FixedWindows(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := New(time.Minute, func() time.Time { return now })
	var last Reservation
	for i := range 3 {
		r, wait := c.Reserve(Limit{"a", 3})
		if wait != 0 {
			t.Fatalf("reservation %d: wait %v", i+1, wait)
		}
		last = r
	}
	now = now.Add(10 * time.Second)
	if _, wait := c.Reserve(Limit{"a", 3}); wait != 50*time.Second {
		t.Fatalf("past Max: wait %v, want 50s", wait)
	}
	last.Release()
	if _, wait := c.Reserve(Limit{"a", 3}); wait != 0 {
		t.Fatalf("after a release: wait %v, want room", wait)
	}
	// All or none: "b" has room, "a" none, so "b" is not counted.
	for range 2 {
		if _, wait := c.Reserve(Limit{"b", 2}, Limit{"a", 3}); wait != 50*time.Second {
			t.Fatalf("b with a full: wait %v, want a's 50s", wait)
		}
	}
	r, wait := c.Reserve(Limit{"b", 2})
	if wait != 0 {
		t.Fatalf("b alone: wait %v", wait)
	}
	r.Forget()
	for range 2 {
		if _, wait := c.Reserve(Limit{"b", 2}); wait != 0 {
			t.Fatalf("b after a forget: wait %v, want its 2 again", wait)
		}
	}
	now = now.Add(time.Minute)
	if _, wait := c.Reserve(Limit{"a", 3}); wait != 0 {
		t.Fatalf("a in a new window: wait %v", wait)
	}
	// A release of a reservation from an ended window changes nothing in the new one.
	last.Release()
	for range 2 {
		c.Reserve(Limit{"a", 3})
	}
	if _, wait := c.Reserve(Limit{"a", 3}); wait == 0 {
		t.Fatal("a stale release gave the new window an extra reservation")
	}
}
