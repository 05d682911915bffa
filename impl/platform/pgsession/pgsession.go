// Package pgsession configures the long-lived PostgreSQL sessions a process holds beside its pool
// (the auth poller's leader lock, the token revocation listener): one connection each, never a
// pooled one, and each must notice quickly that the other end is gone.
package pgsession

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Keepalive settings of such a session, sent in its startup packet. Without them PostgreSQL learns
// that a host which died without closing its socket (power loss, kernel panic, a cut network) is
// gone only from the operating system's defaults, about two hours, and keeps the dead session (and
// what it holds, such as an advisory lock) all that time. With them the server gives up on a silent
// client after about keepaliveIdle + keepaliveCount × keepaliveInterval seconds (11 s), and
// tcp_user_timeout bounds the other case, a reply the dead host never acknowledged, which
// keepalives do not cover, to userTimeout. The client side is the holder's job: it checks its
// session on its own schedule (a ping with a deadline). A process that crashes on a live host needs
// none of this: its kernel closes the socket and the session ends at once.
const (
	keepaliveIdle     = "5"     // seconds without traffic before the server probes
	keepaliveInterval = "2"     // seconds between probes
	keepaliveCount    = "3"     // probes lost before the server ends the session
	userTimeout       = "10000" // milliseconds data may stay unacknowledged
	// connectTimeout bounds a connect to an unreachable server, so the next try comes in seconds
	// rather than after the kernel's SYN retries (minutes).
	connectTimeout = 10 * time.Second
)

// keepalives are the startup parameters Config adds.
var keepalives = map[string]string{
	"tcp_keepalives_idle":     keepaliveIdle,
	"tcp_keepalives_interval": keepaliveInterval,
	"tcp_keepalives_count":    keepaliveCount,
	"tcp_user_timeout":        userTimeout,
}

// Config is pool's connection configuration (a copy: the pool's own is not changed) with the
// session's keepalives and connect timeout. A value the URL already sets (?tcp_keepalives_idle=…,
// connect_timeout) wins: the operator knows the network. A non-empty name is appended to the
// application_name (that of the URL, else "triad"), so the session can be told apart in
// pg_stat_activity.
func Config(pool *pgxpool.Pool, name string) *pgx.ConnConfig {
	return ConfigFrom(pool.Config().ConnConfig, name)
}

// ConfigFrom is Config over base, a connection configuration of its own (the server's
// DATABASE_DIRECT_URL); base is not changed.
func ConfigFrom(base *pgx.ConnConfig, name string) *pgx.ConnConfig {
	cc := base.Copy()
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	for k, v := range keepalives {
		if _, set := cc.RuntimeParams[k]; !set {
			cc.RuntimeParams[k] = v
		}
	}
	if name != "" {
		app := cc.RuntimeParams["application_name"]
		if app == "" {
			app = "triad"
		}
		cc.RuntimeParams["application_name"] = app + " " + name
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = connectTimeout
	}
	return cc
}

// Connect opens a session with cc. A connection pooler such as PgBouncer refuses startup
// parameters it does not know ("unsupported startup parameter: tcp_user_timeout") unless told to
// ignore them; the session is then opened again without the keepalives Config added, which only
// PostgreSQL itself could apply. warn, when not nil, hears that this happened: such a session goes
// through a pooler, where LISTEN and session locks do not hold (the caller checks what it needs).
func Connect(ctx context.Context, cc *pgx.ConnConfig, warn func(err error)) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err == nil || !strings.Contains(err.Error(), "unsupported startup parameter") {
		return conn, err
	}
	if warn != nil {
		warn(err)
	}
	plain := cc.Copy()
	for k, v := range keepalives {
		if plain.RuntimeParams[k] == v {
			delete(plain.RuntimeParams, k)
		}
	}
	return pgx.ConnectConfig(ctx, plain)
}
