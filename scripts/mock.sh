#!/usr/bin/env bash
# Serves each spec's examples with Stoplight Prism in mock mode (the version pinned in package.json),
# one process per spec, until interrupted: a frontend team can work before the backend exists.
#   MOCK_HOST         interface to listen on (127.0.0.1)
#   MOCK_<SPEC>_PORT  the port of one spec (MOCK_ORDERS_PORT, ...); by default its info.x-mock-port
#                     (orders 4010, brands 4011, auth 4012)
#   MOCK_SPECS        which specs to serve (every api/*.yaml)
# Prism reads the bundled documents (gen/openapi/<spec>.yaml, the shared components copied in),
# the same ones the server publishes.
set -euo pipefail
cd "$(dirname "$0")/.."
prism=node_modules/.bin/prism
[ -x "$prism" ] || { echo "Prism is missing: run 'make deps-npm'" >&2; exit 1; }
host=${MOCK_HOST:-127.0.0.1}
all=$(for f in api/*.yaml; do basename "$f" .yaml; done)
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM
for s in ${MOCK_SPECS:-$all}; do
	[ -f "api/$s.yaml" ] || { echo "unknown spec $s (known: "$all")" >&2; exit 2; }
	var="MOCK_${s^^}_PORT"
	port=${!var:-$(sed -n 's/^  x-mock-port: *\([0-9]*\).*/\1/p' "api/$s.yaml" | head -n 1)}
	[ -n "$port" ] || { echo "api/$s.yaml has no info.x-mock-port and $var is not set" >&2; exit 2; }
	echo "mock $s: http://$host:$port (gen/openapi/$s.yaml)"
	"$prism" mock --host "$host" --port "$port" "gen/openapi/$s.yaml" > >(sed -u "s/^/[$s] /") 2>&1 &
	pids+=($!)
done
# One Prism ending (a port in use, a broken spec) ends the others too.
wait -n
