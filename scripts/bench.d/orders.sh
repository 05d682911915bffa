# Orders API load pair for scripts/bench.sh (sourced; T, B and pair come from there): the dev
# server's GET /orders as performer bob (bearer check, page query with its exact total, JSON)
# against the baseline server's raw pgx round trip.
orders_token=$(curl -fs -X POST "$T/oauth/token?grant_type=password&client_id=triad-orders&client_secret=triad-orders-secret&username=bob&password=bob-password" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
pair "GET /orders (bearer) vs raw pgx SELECT 1" "$T/orders" "$B/pgx" -H "Authorization: Bearer $orders_token"
