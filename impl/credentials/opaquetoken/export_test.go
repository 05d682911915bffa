package opaquetoken

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/jackc/pgx/v5"
)

// Hooks for the external tests, which run Tokens over a real surface's store.

// Drop is what a Watcher does on a notification of hash.
func Drop[Owner any](t *Tokens[Owner], hash []byte) { t.drop([sha256.Size]byte(hash)) }

// Flush is what a Watcher does on '*'.
func Flush[Owner any](t *Tokens[Owner]) { t.flush() }

// SetLive is what a Watcher does when it starts or stops listening.
func SetLive[Owner any](t *Tokens[Owner], live bool) { t.setLive(live) }

// HoldReconnects makes every connect of w after the first wait until release is closed, so a test
// can look at the Watcher while it is down; backoff is the wait between tries.
func HoldReconnects(w *Watcher, release <-chan struct{}, backoff time.Duration) {
	dial, n := w.dial, 0
	w.backoffMin, w.backoffMax = backoff, backoff
	w.dial = func(ctx context.Context) (*pgx.Conn, error) {
		n++ // only the Watcher's goroutine dials
		if n > 1 {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return dial(ctx)
	}
}
