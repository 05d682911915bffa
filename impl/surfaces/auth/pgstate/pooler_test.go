package pgstate_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// logBuffer is a log destination the Leader's goroutine writes while the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLeader_BehindTransactionPoolerStepsDown: a Leader whose connection goes through PgBouncer in
// transaction mode takes its lock on whichever server connection ran the statement; once another
// client holds that server connection, the Leader's next check runs elsewhere, finds the lock not
// held by its session, steps down (its job's context ends) and says why. A bare ping, as before,
// went on leading while any other process could take the same lock on that server connection.
func TestLeader_BehindTransactionPoolerStepsDown(t *testing.T) {
	t.Parallel()
	pooled := dbtest.Bouncer(t, dbtest.NewURL(t))
	cc, err := pgx.ParseConfig(pooled)
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	l := pgstate.NewLeaderConfig(cc, "telegram:pooled")
	// The holder's check has the interval as its deadline; a check that misses it on a loaded
	// machine steps down and re-elects (through the pooler, with the lock on another server
	// connection), which is not what this test is about, so the interval stretches with the load.
	l.Interval = patience.Bound(200 * time.Millisecond)
	l.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var elected, stepped atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Lead(ctx, func(jctx context.Context) {
			elected.Add(1)
			<-jctx.Done()
			stepped.Add(1)
		})
	}()
	for deadline := time.Now().Add(patience.Bound(10 * time.Second)); elected.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not elected in time; log:\n%s", logs.String())
		}
	}
	// Another client opens a transaction: PgBouncer hands it the idle server connection that ran
	// the lock (it reuses the most recent first), and the Leader's checks go to a new one.
	other, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := other.Exec(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(patience.Bound(10 * time.Second)); !strings.Contains(logs.String(), "not held by its own session"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the Leader did not notice its lock is not its session's; log:\n%s", logs.String())
		}
	}
	// The line is written as the Leader steps down; its job's context ends just after it.
	for deadline := time.Now().Add(patience.Bound(10 * time.Second)); stepped.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Leader said it stepped down, but its job goes on")
		}
	}
	_, _ = other.Exec(context.Background(), "ROLLBACK")
	cancel()
	<-done
}
