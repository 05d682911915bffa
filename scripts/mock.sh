#!/usr/bin/env bash
# Serves each spec's examples with Stoplight Prism in mock mode (the version pinned in package.json),
# one process per spec, until interrupted: a frontend team can work before the backend exists.
#   MOCK_HOST         interface to listen on (127.0.0.1)
#   MOCK_ORDERS_PORT  orders (4010), MOCK_BRANDS_PORT brands (4011), MOCK_AUTH_PORT auth (4012)
#   MOCK_SPECS        which specs to serve ("orders brands auth")
set -euo pipefail
cd "$(dirname "$0")/.."
prism=node_modules/.bin/prism
[ -x "$prism" ] || { echo "Prism is missing: run 'make deps-npm'" >&2; exit 1; }
host=${MOCK_HOST:-127.0.0.1}
declare -A port=([orders]=${MOCK_ORDERS_PORT:-4010} [brands]=${MOCK_BRANDS_PORT:-4011} [auth]=${MOCK_AUTH_PORT:-4012})
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM
for s in ${MOCK_SPECS:-orders brands auth}; do
	[ -n "${port[$s]:-}" ] || { echo "unknown spec $s (orders, brands, auth)" >&2; exit 2; }
	echo "mock $s: http://$host:${port[$s]} (api/$s.yaml)"
	"$prism" mock --host "$host" --port "${port[$s]}" "api/$s.yaml" > >(sed -u "s/^/[$s] /") 2>&1 &
	pids+=($!)
done
# One Prism ending (a port in use, a broken spec) ends the others too.
wait -n
