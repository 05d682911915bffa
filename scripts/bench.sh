#!/usr/bin/env bash
# make bench: Go benchmarks (each reports its own same-run baseline ratio), then a wrk load run
# against the real binary on loopback beside the baseline server (cmd/benchbase), as ratios, then
# the server's RSS and a table of every gated ratio (median of ROUNDS runs, their range, target,
# PASS/FAIL); it exits non-zero when a target is not met. About 8-10 minutes on 2 cores
# (ROUNDS=1 BENCH_OTHERS=0 for a quick look).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-1s}
DURATION=${DURATION:-3s}
CONNS=${CONNS:-32}
ROUNDS=${ROUNDS:-3}

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing wrk from Debian..."
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "wrk is missing: sudo apt-get install wrk" >&2; exit 1
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
summary="$work/summary"
# target NAME TARGET RATIO... records a gated ratio: each RATIO is one run's figure (ours over the
# same-run baseline); the summary prints their median, their range and PASS/FAIL against TARGET.
target() { local name=$1 want=$2; shift 2; echo "$name|$want|$*" >>"$summary"; }
# metric UNIT FILE prints, one per line, the value reported before UNIT on each benchmark line.
metric() { awk -v u="$1" '/^Benchmark/ {for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1)}' "$2"; }

gated='BenchmarkCreateThroughput|BenchmarkAcceptThroughput|BenchmarkSubscribeHotBrand'
echo "== Go benchmarks with a target (${ROUNDS} runs each; every run measures ours and its baseline in alternating rounds)"
go test -run '^$' -bench 'BenchmarkCreateThroughput|BenchmarkAcceptThroughput' -benchtime 1x -count "$ROUNDS" ./impl/orders/httpapi/ |
  grep -E '^(Benchmark|ok|FAIL|---)' | tee "$work/orders.txt" || true
go test -run '^$' -bench 'BenchmarkSubscribeHotBrand' -benchtime 1x -count "$ROUNDS" ./impl/brands/httpapi/ |
  grep -E '^(Benchmark|ok|FAIL|---)' | tee "$work/brands.txt" || true
grep '^BenchmarkCreate' "$work/orders.txt" >"$work/create.txt" || true
grep '^BenchmarkAccept' "$work/orders.txt" >"$work/accept.txt" || true
target "POST /orders vs one-INSERT handler" 0.8 $(metric x-baseline "$work/create.txt")
target "PATCH accept vs one-row UPDATE tx" 0.5 $(metric x-baseline "$work/accept.txt")
target "PATCH accept vs one-row UPDATE over HTTP (info)" - $(metric x-baseline-http "$work/accept.txt")
target "PATCH accept vs its write floor (info)" - $(metric x-floor "$work/accept.txt")
target "subscribe 1 hot brand vs one-row INSERT" 0.5 $(metric x-baseline "$work/brands.txt")
target "subscribe, first use of each token (info)" - $(metric x-baseline-first-use "$work/brands.txt")

if [ "${BENCH_OTHERS:-1}" = 1 ]; then
  echo
  echo "== Other Go benchmarks (once each; ratios against baselines of the same run; BENCH_OTHERS=0 skips them)"
  go test -run '^$' -bench . -skip "$gated" -benchmem -benchtime "$BENCHTIME" ./... | grep -E '^(Benchmark|ok|FAIL|---)' | grep -v 'no test files'
fi

echo
echo "== wrk load run: triad vs baseline server (${DURATION}, ${CONNS} connections, 2 threads)"
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
# rounds NAME TARGET OURS THEIRS: HEALTHZ_ROUNDS short wrk runs a side, alternating which goes
# first (ABBA), one ratio per round, so a neighbour's burst moves one round instead of the result.
rounds() {
  local name=$1 want=$2 ours=$3 theirs=$4 i o b ratios=()
  for ((i = 0; i < ${HEALTHZ_ROUNDS:-8}; i++)); do
    if ((i % 2 == 0)); then
      b=$(wrk -t2 -c"$CONNS" -d2s "$theirs" | awk '/Requests\/sec/ {print $2}'); o=$(wrk -t2 -c"$CONNS" -d2s "$ours" | awk '/Requests\/sec/ {print $2}')
    else
      o=$(wrk -t2 -c"$CONNS" -d2s "$ours" | awk '/Requests\/sec/ {print $2}'); b=$(wrk -t2 -c"$CONNS" -d2s "$theirs" | awk '/Requests\/sec/ {print $2}')
    fi
    ratios+=("$(python3 -c "print($o / $b)")")
    printf '%-40s %12.0f req/s  baseline %12.0f req/s  ratio %.2fx (round %d)\n' "$name" "$o" "$b" "${ratios[-1]}" "$((i + 1))"
  done
  target "$name" "$want" "${ratios[@]}"
}
T="http://127.0.0.1:$port"; B="http://127.0.0.1:$base_port"
rounds "GET /healthz vs bare chi" 0.9 "$T/healthz" "$B/bare"
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
echo
echo "== Targets (median of the runs; range is the lowest and highest run)"
python3 - "$summary" <<'EOF'
import statistics as st, sys
failed = 0
for line in open(sys.argv[1]):
    name, want, vals = line.rstrip("\n").split("|")
    xs = [float(v) for v in vals.split()]
    if not xs:
        print(f"{name:<42} no figure  FAIL"); failed += 1; continue
    med = st.median(xs)
    verdict = "info" if want == "-" else ("PASS" if med >= float(want) else "FAIL")
    failed += verdict == "FAIL"
    tgt = "" if want == "-" else f">= {float(want):.2f}x"
    print(f"{name:<42} {med:5.2f}x  range {min(xs):.2f}-{max(xs):.2f} ({len(xs)} runs)  target {tgt:<9} {verdict}")
print("all targets met" if not failed else f"{failed} target(s) not met")
sys.exit(1 if failed else 0)
EOF
