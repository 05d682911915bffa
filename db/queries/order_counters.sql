-- name: IncOrderCounter :exec
-- IncOrderCounter adds one to the exact size of a list, creating its counter on first use.
INSERT INTO order_counters (scope, owner_id, n) VALUES (@scope, @owner_id, 1)
ON CONFLICT (scope, owner_id) DO UPDATE SET n = order_counters.n + 1;

-- name: DecOrderCounter :exec
-- DecOrderCounter takes one from the exact size of a list.
UPDATE order_counters SET n = n - 1 WHERE scope = @scope AND owner_id = @owner_id;
