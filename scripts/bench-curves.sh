#!/usr/bin/env bash
# make bench-curves: the orders API's cost curves. Starts the real binary in dev mode on its own
# data directory, then cmd/benchcurves seeds 10k, 100k, 1M and 10M orders in turn and prints page
# times and create/accept throughput at each size, then throughput at 1, 8, 64 and 256 clients.
# SIZES, CLIENTS and DURATION override the defaults (e.g. SIZES=10000,100000 for a quick look).
# Then the ledger curve (docs/scaling.md): a year of completed orders grown to LEDGER_SIZES ledger
# rows (1M, 10M, 100M; LEDGER_SIZES= skips it), timed at each size. KEEP=1 keeps the data directory
# (and says where) for a look afterwards, e.g. timing server -mode archive on it.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-10000,100000,1000000,10000000}
CLIENTS=${CLIENTS:-1,8,64,256}
DURATION=${DURATION:-3s}
LEDGER_SIZES=${LEDGER_SIZES-1000000,10000000,100000000}

work=$(mktemp -d)
cleanup() {
  [ -n "${srv_pid:-}" ] && kill -INT "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null || true
  if [ "${KEEP:-}" = 1 ]; then echo "kept $work (server data in $work/data)"; else rm -rf "$work"; fi
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

go build -o "$work/server" ./cmd/server
go build -o "$work/benchcurves" ./cmd/benchcurves
chmod 755 "$work"
"$work/server" -mode dev -data-dir "$work/data" -addr "127.0.0.1:$port" -auth-dev-port 0 -log-level warn 2>"$work/server.log" &
srv_pid=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/server.log"; exit 1; }

echo "== cost curves on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr)"
"$work/benchcurves" -url "http://127.0.0.1:$port" -server-pid "$srv_pid" \
  -database-url "postgres://postgres@/triad?host=$work/data/pg&sslmode=disable" \
  -sizes "$SIZES" -clients "$CLIENTS" -duration "$DURATION" -ledger-sizes "$LEDGER_SIZES"
