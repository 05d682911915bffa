-- name: CreateOrder :one
-- CreateOrder publishes a waiting order of a customer and counts it in the new-orders list and
-- the customer's, in one statement: each counter change goes to the session's own slot, so
-- concurrent creates lock no common row. The counters are always changed waiting first, then
-- the user's (the order every counter change follows).
WITH o AS (
    INSERT INTO orders (customer_id, description, price) VALUES (@customer_id, @description, @price)
    RETURNING id, customer_id, description, price, status, created_at
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), 1
    FROM o, LATERAL (VALUES ('waiting', 0::bigint), ('customer', o.customer_id)) AS c(scope, owner_id)
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
)
SELECT id, customer_id, description, price, status, created_at FROM o;

-- name: GetOrderState :one
-- GetOrderState reads who owns an order and its status, to explain a refused transition.
SELECT customer_id, performer_id, status FROM orders WHERE id = @id;

-- name: TakeOrder :one
-- TakeOrder moves a waiting order to IN PROGRESS for a performer and moves it from the
-- new-orders count to the performer's, in one statement (session slots, as CreateOrder); no row
-- means it was not waiting. Among concurrent takes of one order exactly one matches the row.
WITH t AS (
    UPDATE orders SET status = 'IN PROGRESS', performer_id = @performer_id, updated_at = now()
    WHERE id = @id AND status = 'WAITING'
    RETURNING id, customer_id, performer_id, description, price, status, created_at
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), c.delta
    FROM t, LATERAL (VALUES ('waiting', 0::bigint, -1::bigint), ('performer', t.performer_id, 1::bigint)) AS c(scope, owner_id, delta)
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
)
SELECT id, customer_id, description, price, status, created_at FROM t;

-- name: PassOrder :one
-- PassOrder moves an order in progress to READY when the caller is its performer; no row means refused.
UPDATE orders SET status = 'READY', updated_at = now()
WHERE id = @id AND status = 'IN PROGRESS' AND performer_id = @performer_id
RETURNING id, customer_id, description, price, status, created_at;

-- name: AcceptOrder :one
-- AcceptOrder completes and pays for a READY order of the caller (order_accept holds every rule);
-- outcome names the result, and fields a refusal did not reach are zero.
SELECT a.outcome::text AS outcome, coalesce(a.customer_id, 0)::bigint AS customer_id,
       coalesce(a.performer_id, 0)::bigint AS performer_id, coalesce(a.performer_name, '')::text AS performer_name,
       coalesce(a.description, '')::text AS description, coalesce(a.price, 0)::bigint AS price,
       coalesce(a.commission, 0)::bigint AS commission, coalesce(a.balance, 0)::bigint AS balance,
       coalesce(a.status, '')::text AS status, coalesce(a.created_at, 'epoch')::timestamptz AS created_at
FROM order_accept(@order_id, @caller_id) AS a;

-- name: GetVisibleOrder :one
-- GetVisibleOrder reads an order as the caller may see it: its customer and its performer always,
-- any performer while it is WAITING (it is on the new-orders list then). No row means the order
-- does not exist or is not the caller's to see; callers cannot tell which.
SELECT o.id, o.customer_id, o.performer_id, coalesce(u.username, '')::text AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM orders o LEFT JOIN order_users u ON u.id = o.performer_id
WHERE o.id = @id
  AND (o.customer_id = @caller_id OR o.performer_id = @caller_id
       OR (o.status = 'WAITING' AND @caller_is_performer::boolean));
