# Orders API reads for scripts/bench.sh (sourced; T, B, work, rounds and target come from there):
# each read route of the dev server against the baseline server's hand-written chi + pgx handler
# running the same SQL (cmd/benchbase/reads.go) on the same database, in READ_ROUNDS interleaved
# wrk rounds. The new-orders list is seeded to 1,000 waiting orders first (with the counters they
# would have moved), so page 0 is a real page of 20 over a list of a thousand.
psql -qAt "host=$work/data/pg user=postgres dbname=triad" >/dev/null <<'SQL'
WITH c AS (SELECT id FROM order_users WHERE username = 'alice'),
o AS (
  INSERT INTO orders (customer_id, description, price)
  SELECT c.id, 'Bench order ' || g, 100 + (g * 7919) % 100000 FROM c, generate_series(1, 1000) AS g RETURNING 1
)
INSERT INTO order_counters (scope, owner_id, slot, n)
SELECT s.scope, s.owner, 0, (SELECT count(*) FROM o) FROM c, LATERAL (VALUES ('waiting', 0::bigint), ('customer', c.id)) AS s(scope, owner)
ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n;
ANALYZE orders;
SQL
orders_login() {
  curl -fs -X POST "$T/oauth/token?grant_type=password&client_id=triad-orders&client_secret=triad-orders-secret&username=$1&password=$1-password" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
orders_token=$(orders_login bob)
alice_token=$(orders_login alice)
alice_id=$(curl -fs -H "Authorization: Bearer $alice_token" "$T/authenticated" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
waiting_id=$(curl -fs -H "Authorization: Bearer $orders_token" "$T/orders?size=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["content"][0]["id"])')
bob=(-H "Authorization: Bearer $orders_token")
alice=(-H "Authorization: Bearer $alice_token")
# Each read is gated at 0.75x of its same-SQL handler (docs/scaling.md, "Reads against the same SQL").
ROUNDS_OF=${READ_ROUNDS:-6}
rounds "GET /orders vs same-SQL chi+pgx" 0.75 "$T/orders?page=0&size=20" "$B/orders?page=0&size=20" "${bob[@]}"
rounds "GET /users/{id}/orders vs same SQL" 0.75 "$T/users/$alice_id/orders?page=0&size=20" "$B/users/$alice_id/orders?page=0&size=20" "${alice[@]}"
rounds "GET /orders/{id} vs same SQL" 0.75 "$T/orders/$waiting_id" "$B/orders/$waiting_id" "${bob[@]}"
rounds "GET /authenticated vs same SQL" 0.75 "$T/authenticated" "$B/authenticated" "${bob[@]}"
unset ROUNDS_OF
