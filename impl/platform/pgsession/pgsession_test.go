package pgsession

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestConfig_SessionDetectsADeadHost: the session carries keepalives short enough that PostgreSQL
// ends the session of a host that died silently (and frees what it held) within seconds, the server
// accepts them (an unknown parameter or a bad value would refuse the connection), the session is
// named after what it does, and a URL's own values win.
func TestConfig_SessionDetectsADeadHost(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	cc := Config(pool, "listener")
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
		t.Errorf("keepalives idle %d, interval %d, count %d: a dead host keeps its session %v, want ≤ 15s", idle, interval, count, verdict)
	}
	if ut := time.Duration(num("tcp_user_timeout")) * time.Millisecond; ut <= 0 || ut > 15*time.Second {
		t.Errorf("tcp_user_timeout %v: unacknowledged data keeps a dead host's session that long, want ≤ 15s", ut)
	}
	if cc.ConnectTimeout <= 0 || cc.ConnectTimeout > time.Minute {
		t.Errorf("connect timeout %v: an unreachable server stalls a reconnect", cc.ConnectTimeout)
	}
	if _, set := pool.Config().ConnConfig.RuntimeParams["tcp_keepalives_idle"]; set {
		t.Errorf("the pool's own configuration was changed: its connections carry the session's settings")
	}

	conn, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatalf("the server refuses the session's settings: %v", err)
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
			t.Errorf("%s comes from %q, want the session's startup packet (client)", k, source)
		}
	}
	var app string
	if err := conn.QueryRow(context.Background(), "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&app); err != nil {
		t.Fatal(err)
	}
	if app != "triad listener" {
		t.Errorf("application_name %q, want %q", app, "triad listener")
	}

	// An operator's value in the URL wins.
	own, err := pgxpool.New(context.Background(), url+"&tcp_keepalives_idle=60&application_name=shop")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	if got := Config(own, "").RuntimeParams["tcp_keepalives_idle"]; got != "60" {
		t.Errorf("URL's tcp_keepalives_idle=60 became %q", got)
	}
	for name, want := range map[string]string{"": "shop", "listener": "shop listener"} {
		if got := Config(own, name).RuntimeParams["application_name"]; got != want {
			t.Errorf("URL's application_name=shop with name %q became %q, want %q", name, got, want)
		}
	}
}
