# Brands API load pairs for scripts/bench.sh (sourced; T, B and pair come from there): the dev
# server's public brand list (the cached list, revalidated by one digest query) and the demo user's
# profile (token hash -> user -> subscriptions, one query) against the baseline server's raw pgx
# round trip. The like-for-like comparisons (same rows, 1,000 brands) are the Go benchmarks in
# impl/surfaces/brands/httpapi.
brands_token=$(curl -fs -X POST "$T/api/user/login" -d email=demo@brands.test -d password=demo-password |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
pair "GET /api/brand/list vs raw pgx SELECT 1" "$T/api/brand/list" "$B/pgx"
pair "GET /api/user/me vs raw pgx SELECT 1" "$T/api/user/me?access_token=$brands_token" "$B/pgx"
