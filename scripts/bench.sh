#!/usr/bin/env bash
# make bench: Go benchmarks (each reports its own same-run baseline ratio), then a wrk load run
# against the real binary on loopback beside the baseline server (cmd/benchbase), as ratios.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-1s}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-32}

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing wrk from Debian..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "wrk is missing: sudo apt-get install wrk" >&2; exit 1
  fi
fi

echo "== Go benchmarks (ratios are against baselines measured in the same benchmark run)"
go test -run '^$' -bench . -benchmem -benchtime "$BENCHTIME" ./... | grep -E '^(Benchmark|ok|FAIL|---)' | grep -v 'no test files'

echo
echo "== wrk load run: triad vs baseline server (${DURATION}, ${CONNS} connections, 2 threads)"
work=$(mktemp -d)
cleanup() {
  [ -n "${srv_pid:-}" ] && kill -INT "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null || true
  [ -n "${base_pid:-}" ] && kill -INT "$base_pid" 2>/dev/null && wait "$base_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

go build -o "$work/server" ./cmd/server
go build -o "$work/benchbase" ./cmd/benchbase
port=$(free_port); base_port=$(free_port)
chmod 755 "$work"
"$work/server" -mode dev -data-dir "$work/data" -addr "127.0.0.1:$port" -auth-dev-port 0 -log-level warn 2>"$work/server.log" &
srv_pid=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/server.log"; exit 1; }
# rss_mib FIELD prints the server's VmRSS (now) or VmHWM (peak so far) in MiB.
rss_mib() { awk -v f="$1:" '$1 == f {printf "%.0f", $2 / 1024}' "/proc/$srv_pid/status"; }
rss_idle=$(rss_mib VmRSS)
"$work/benchbase" -addr "127.0.0.1:$base_port" -database-url "postgres://postgres@/triad?host=$work/data/pg&sslmode=disable" 2>"$work/base.log" &
base_pid=$!
for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$base_port/bare" >/dev/null 2>&1 && break; sleep 0.1; done

rps() { wrk -t2 -c"$CONNS" -d"$DURATION" "$@" | awk '/Requests\/sec/ {print $2}'; }
# best of two interleaved runs each, to damp the noise of a shared machine
pair() {
  local name=$1 ours=$2 theirs=$3; shift 3
  local b1 o1 b2 o2 b o
  b1=$(rps "$@" "$theirs"); o1=$(rps "$@" "$ours"); b2=$(rps "$@" "$theirs"); o2=$(rps "$@" "$ours")
  b=$(python3 -c "print(max($b1,$b2))"); o=$(python3 -c "print(max($o1,$o2))")
  printf '%-40s %12.0f req/s  baseline %12.0f req/s  ratio %.2fx\n' "$name" "$o" "$b" "$(python3 -c "print($o/$b)")"
}
T="http://127.0.0.1:$port"; B="http://127.0.0.1:$base_port"
pair "GET /healthz vs bare chi"                "$T/healthz" "$B/bare"
pair "GET /readyz vs raw pgx SELECT 1"         "$T/readyz"  "$B/pgx"
# Surfaces add their load pairs in scripts/bench.d/*.sh; each sees T, B and the pair function.
for f in scripts/bench.d/*.sh; do [ -e "$f" ] && . "$f"; done
rss_wrk=$(rss_mib VmHWM)
# 256 clients at once on the orders list (bearer check, page query, JSON): the memory a burst costs.
wide=$(wrk -t2 -c256 -d"$DURATION" -H "Authorization: Bearer $orders_token" "$T/orders" | awk '/Requests\/sec/ {print $2}')
printf '%-40s %12.0f req/s\n' "GET /orders, 256 connections" "$wide"
echo
printf 'server RSS: idle %s MiB, peak under the %s-connection wrk runs %s MiB, peak under 256 connections %s MiB (now %s MiB)\n' \
  "$rss_idle" "$CONNS" "$rss_wrk" "$(rss_mib VmHWM)" "$(rss_mib VmRSS)"
echo "done"
