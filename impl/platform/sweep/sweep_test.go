package sweep

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestStart_SweepsAtOnceAndStopsCleanly: the first sweep runs at start (a restarted server does
// not wait an interval), failures do not end the loop, and stop returns only after the loop ended.
func TestStart_SweepsAtOnceAndStopsCleanly(t *testing.T) {
	var calls atomic.Int32
	first := make(chan struct{})
	stop := Start(nil, "test", time.Hour, func(ctx context.Context) (int64, error) {
		if calls.Add(1) == 1 {
			close(first)
		}
		return 0, errors.New("transient")
	})
	<-first
	stop()
	n := calls.Load()
	if n != 1 {
		t.Fatalf("swept %d times within an hour's interval", n)
	}
	if calls.Load() != n {
		t.Fatal("the loop ran after stop returned")
	}
}
