package idempotency

import (
	"context"
	"sync"
)

// HoldOnce is an Options.Hold for tests in process: the first keyed request that reaches its
// point stops there until Release is closed (or its request ends), so a test can send a repeat
// while the first is known to be running. Held is closed once it has stopped.
type HoldOnce struct {
	point         string
	once          sync.Once
	Held, Release chan struct{}
}

// NewHoldOnce returns a HoldOnce at point (HoldInTx or HoldBeforeReply).
func NewHoldOnce(point string) *HoldOnce {
	return &HoldOnce{point: point, Held: make(chan struct{}), Release: make(chan struct{})}
}

// Hold is the Options.Hold.
func (h *HoldOnce) Hold(ctx context.Context, point string) {
	if point != h.point {
		return
	}
	first := false
	h.once.Do(func() { first = true; close(h.Held) })
	if first {
		select {
		case <-h.Release:
		case <-ctx.Done():
		}
	}
}
