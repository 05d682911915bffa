package pgstate

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/dbtest"
)

// TestLeader_SessionDetectsADeadHost: the leader's session carries keepalives short enough that
// PostgreSQL frees the lock of a host that died silently within seconds, the server accepts them
// (an unknown parameter or a bad value would refuse the connection), and a URL's own value wins.
func TestLeader_SessionDetectsADeadHost(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	cc := leaderConnConfig(pool)
	num := func(k string) int {
		n, err := strconv.Atoi(cc.RuntimeParams[k])
		if err != nil {
			t.Fatalf("%s = %q: %v", k, cc.RuntimeParams[k], err)
		}
		return n
	}
	idle, interval, count := num("tcp_keepalives_idle"), num("tcp_keepalives_interval"), num("tcp_keepalives_count")
	verdict := time.Duration(idle+interval*count) * time.Second
	if idle <= 0 || interval <= 0 || count <= 0 || verdict > 15*time.Second {
		t.Errorf("keepalives idle %d, interval %d, count %d: a dead host keeps the lock %v, want ≤ 15s", idle, interval, count, verdict)
	}
	if ut := time.Duration(num("tcp_user_timeout")) * time.Millisecond; ut <= 0 || ut > 15*time.Second {
		t.Errorf("tcp_user_timeout %v: unacknowledged data keeps a dead host's lock that long, want ≤ 15s", ut)
	}
	if cc.ConnectTimeout <= 0 || cc.ConnectTimeout > time.Minute {
		t.Errorf("connect timeout %v: an unreachable server stalls the election", cc.ConnectTimeout)
	}
	if _, set := pool.Config().ConnConfig.RuntimeParams["tcp_keepalives_idle"]; set {
		t.Errorf("the pool's own configuration was changed: its connections carry the leader's settings")
	}

	conn, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatalf("the server refuses the leader's session settings: %v", err)
	}
	defer conn.Close(context.Background())
	// The settings are in force for the session (they read as 0 over a Unix socket, which has no
	// TCP to keep alive: the source says they came from the client).
	for _, k := range []string{"tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout"} {
		var source string
		if err := conn.QueryRow(context.Background(), "SELECT source FROM pg_settings WHERE name = $1", k).Scan(&source); err != nil {
			t.Fatal(err)
		}
		if source != "client" {
			t.Errorf("%s comes from %q, want the leader's startup packet (client)", k, source)
		}
	}

	// An operator's value in the URL wins.
	own, err := pgxpool.New(context.Background(), url+"&tcp_keepalives_idle=60")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	if got := leaderConnConfig(own).RuntimeParams["tcp_keepalives_idle"]; got != "60" {
		t.Errorf("URL's tcp_keepalives_idle=60 became %q", got)
	}
}
