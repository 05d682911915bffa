#!/usr/bin/env bash
# Starts the production topology locally: one PostgreSQL, N replicas of bin/server (dev mode, so
# the demo data exists) and HAProxy in front, round-robin, health-checked on /readyz.
#   REPLICAS (3)  PORT (8080, the balancer)  DATA_DIR (./var/replicas)
# Ctrl-C stops everything. The replicas listen on PORT+1..PORT+N; the dev OAuth2 server (shared by
# the replicas) on AUTH_DEV_PORT (8084 unless PORT+N reaches it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPLICAS=${REPLICAS:-3}
PORT=${PORT:-8080}
DATA_DIR=$(mkdir -p "${DATA_DIR:-./var/replicas}" && cd "${DATA_DIR:-./var/replicas}" && pwd)
DEV_PORT=${AUTH_DEV_PORT:-8084}
if [ "$DEV_PORT" -le $((PORT + REPLICAS)) ]; then DEV_PORT=$((PORT + REPLICAS + 1)); fi
PG=$DATA_DIR/pg

bindir=$( (pg_config --bindir 2>/dev/null || true) | head -n1)
[ -x "$bindir/initdb" ] || bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bindir/initdb" ] || { echo "PostgreSQL server binaries not found (make deps-postgres)" >&2; exit 1; }
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)

# PostgreSQL refuses to run as root: as root, run it as the postgres system user.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ ! -f "$PG/PG_VERSION" ]; then
  mkdir -p "$PG"; [ "$(id -u)" = 0 ] && chown postgres: "$PG"
  as_pg "$bindir/initdb" -D "$PG" -U postgres -A trust >/dev/null
fi
[ "$(id -u)" = 0 ] && chown postgres: "$PG"
# pids are the servers' and HAProxy's own process ids (not those of the log-prefixing seds), so
# stopping the script (Ctrl-C, kill, an error) stops each of them, then PostgreSQL.
pids=()
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  as_pg "$bindir/pg_ctl" -D "$PG" -m fast stop >/dev/null 2>&1 || true
  echo "stopped"
}
trap cleanup INT TERM EXIT
# Unix socket in the data folder only: no TCP port, so it never collides with another cluster.
as_pg "$bindir/pg_ctl" -D "$PG" -w -l "$PG/log" -o "-c listen_addresses='' -c unix_socket_directories='$PG' -c max_connections=200" start >/dev/null
as_pg "$bindir/psql" -h "$PG" -U postgres -qtAc "SELECT 1 FROM pg_database WHERE datname='triad'" | grep -q 1 ||
  as_pg "$bindir/createdb" -h "$PG" -U postgres triad
export DATABASE_URL="postgres://postgres@/triad?host=$PG"

cfg=$DATA_DIR/haproxy.cfg
cat >"$cfg" <<CFG
global
	maxconn 4096
defaults
	mode http
	timeout connect 2s
	timeout client 60s
	timeout server 60s
	retries 3
	option redispatch
	option forwardfor
frontend triad
	bind :$PORT
	default_backend replicas
backend replicas
	balance roundrobin
	option httpchk GET /readyz
	http-check expect status 200
	default-server inter 500ms fall 1 rise 1
CFG
# All replicas start at once: migrations and dev data run under an advisory lock, once.
for i in $(seq 1 "$REPLICAS"); do
  p=$((PORT + i))
  echo "	server r$i 127.0.0.1:$p check" >>"$cfg"
  # The balancer is the trusted proxy: the replicas log and throttle the client it names. The
  # prefixing sed reads a process substitution, so $! is the server itself, not the end of a pipe.
  ./bin/server -mode dev -addr "127.0.0.1:$p" -data-dir "$DATA_DIR/r$i" -auth-url "http://localhost:$PORT" \
    -trusted-proxies 127.0.0.1 -auth-dev-port "$DEV_PORT" > >(sed -u "s/^/[r$i] /") 2>&1 &
  pids+=($!)
done
"$HAPROXY" -db -f "$cfg" > >(sed -u 's/^/[lb] /') 2>&1 &
pids+=($!)
echo "balancer on http://localhost:$PORT over $REPLICAS replicas (ports $((PORT + 1))-$((PORT + REPLICAS))); Ctrl-C stops all"
wait
