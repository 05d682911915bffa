#!/usr/bin/env bash
# Login-flood load run (make flood): starts bin/server in prod mode with its own managed PostgreSQL,
# floods the orders and brands login and registration endpoints while one real user logs in every
# half second, and fails when the server's peak RSS or the real user's median login is over its
# bound. RUNS (1) repeats it, to see the spread; FLOOD_ARGS pass flags to cmd/flood (e.g.
# "-sources 120" to send the flood from 120 addresses instead of one, "-duration 60s").
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-1}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/flood" ./cmd/flood
failed=0
for i in $(seq 1 "$runs"); do
  echo "== flood run $i of $runs"
  # shellcheck disable=SC2086 # FLOOD_ARGS is a list of flags
  "$bin/flood" -server bin/server ${FLOOD_ARGS:-} || failed=$((failed + 1))
done
if [ "$failed" -gt 0 ]; then
  echo "$failed of $runs flood runs failed"
  exit 1
fi
