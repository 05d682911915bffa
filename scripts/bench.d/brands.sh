# Brands API reads for scripts/bench.sh (sourced; T, B and rounds come from there): the dev
# server's public brand list (the cached rendering, revalidated by one digest query) and the demo
# user's profile (token hash -> user -> subscriptions, one query) against the baseline server's
# hand-written chi + pgx handlers running the same SQL (cmd/benchbase/reads.go), in READ_ROUNDS
# interleaved wrk rounds.
brands_token=$(curl -fs -X POST "$T/api/user/login" -d email=demo@brands.test -d password=demo-password |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
ROUNDS_OF=${READ_ROUNDS:-6}
rounds "GET /api/brand/list vs same SQL" 0.75 "$T/api/brand/list" "$B/api/brand/list"
rounds "GET /api/user/me vs same SQL" 0.75 "$T/api/user/me?access_token=$brands_token" "$B/api/user/me?access_token=$brands_token"
unset ROUNDS_OF
