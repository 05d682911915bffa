-- name: OrderListTotal :one
-- OrderListTotal is the exact size of one list: the sum of its counter's slots (0 for a list never
-- counted).
SELECT coalesce(sum(n), 0)::bigint AS n FROM order_counters WHERE scope = @scope AND owner_id = @owner_id;
