// Package sweep runs the periodic deletion of expired rows (access tokens and the like): one loop,
// one log vocabulary and one way to stop it, whichever surface owns the rows.
package sweep

import (
	"context"
	"log/slog"
	"time"
)

// Func deletes what has expired and reports how many rows went.
type Func func(ctx context.Context) (int64, error)

// Start runs f at once and then every interval in a goroutine until the returned stop is called;
// stop waits for a sweep in progress to end. Failures are logged and retried at the next tick:
// expired rows authenticate nobody, so a late sweep only leaves the table larger for a while.
func Start(log *slog.Logger, name string, every time.Duration, f Func) (stop func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if n, err := f(ctx); err != nil && ctx.Err() == nil {
				log.Warn("sweeping expired rows", "what", name, "err", err)
			} else if n > 0 {
				log.Info("swept expired rows", "what", name, "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}
