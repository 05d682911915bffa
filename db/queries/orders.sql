-- name: CreateOrder :one
-- CreateOrder publishes a waiting order of a customer, reserving its price plus commission of the
-- customer's balance, and counts it in the new-orders list and the customer's, in one statement.
-- The reservation is a conditional UPDATE (the funds check is its WHERE; the CHECK reserved <=
-- balance backs it), and the INSERT reads its row, so a create the balance cannot cover matches
-- no row and changes nothing. Each counter change goes to the session's own slot, so concurrent
-- creates of different customers lock no common row; one customer's creates queue on its row.
-- The counters are always changed waiting first, then the user's.
WITH cost AS (
    SELECT sqlc.arg(price)::bigint AS price, sqlc.arg(price)::bigint + order_commission(sqlc.arg(price)::bigint) AS total
), funds AS (
    UPDATE order_users u SET reserved = u.reserved + cost.total
    FROM cost WHERE u.id = @customer_id AND u.balance - u.reserved >= cost.total
    RETURNING u.id, cost.price, cost.total
), o AS (
    INSERT INTO orders (customer_id, description, price, held)
    SELECT funds.id, @description, funds.price, funds.total FROM funds
    RETURNING id, customer_id, description, price, status, created_at
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), 1
    FROM o, LATERAL (VALUES ('waiting', 0::bigint), ('customer', o.customer_id)) AS c(scope, owner_id)
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
)
SELECT id, customer_id, description, price, status, created_at FROM o;

-- name: GetOrderFunds :one
-- GetOrderFunds reads a customer's balance and what its open orders reserve, and what an order
-- of a price would cost, to explain a create refused for funds.
SELECT balance, reserved, order_commission(@price::bigint)::bigint AS commission FROM order_users WHERE id = @id;

-- name: GetOrderState :one
-- GetOrderState reads who owns an order and its status, to explain a refused transition.
SELECT customer_id, performer_id, status FROM orders WHERE id = @id;

-- name: TakeOrder :one
-- TakeOrder moves a waiting order to IN PROGRESS for a performer holding fewer than max_held
-- orders (IN PROGRESS and READY), unless the performer's cool-down on it runs (order_take holds
-- the rules and the counter changes); outcome names the result: taken, too_many (held: the
-- performer's count), cooling_down (until: when it ends) or not_waiting.
SELECT t.outcome::text AS outcome, coalesce(t.held, 0)::integer AS held,
       coalesce(t.until, 'epoch')::timestamptz AS until,
       coalesce(t.customer_id, 0)::bigint AS customer_id, coalesce(t.description, '')::text AS description,
       coalesce(t.price, 0)::bigint AS price, coalesce(t.status, '')::text AS status,
       coalesce(t.created_at, 'epoch')::timestamptz AS created_at
FROM order_take(@order_id, @performer_id, @max_held) AS t;

-- name: PassOrder :one
-- PassOrder moves an order in progress to READY when the caller is its performer; no row means
-- refused. The order stays among what its performer holds until its customer accepts or rejects
-- it. Locks: the order.
UPDATE orders o SET status = 'READY', updated_at = now()
WHERE o.id = @id AND o.status = 'IN PROGRESS' AND o.performer_id = @performer_id
RETURNING o.id, o.customer_id, o.description, o.price, o.status, o.created_at;

-- name: CancelOrder :one
-- CancelOrder withdraws a waiting order of the calling customer (→ CANCELLED): its reservation
-- returns to the customer's free balance, it leaves the new-orders count (it stays in the
-- customer's list) and the ledger records the cancel. No row means refused. Locks, each CTE
-- reading the rows of the one before so they run in this order: the order, the customer, the
-- new-orders counter slot.
WITH c AS (
    UPDATE orders o SET status = 'CANCELLED', updated_at = now()
    WHERE o.id = @id AND o.status = 'WAITING' AND o.customer_id = @customer_id
    RETURNING o.id, o.customer_id, o.description, o.price, o.held, o.status, o.created_at
), funds AS (
    UPDATE order_users u SET reserved = u.reserved - c.held FROM c WHERE u.id = c.customer_id
    RETURNING u.id
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT 'waiting', 0, order_counter_slot(), -1 FROM funds
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
), ledger AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) SELECT c.customer_id, c.id, 'cancel', 0 FROM c
)
SELECT c.id, c.customer_id, c.description, c.price, c.status, c.created_at FROM c;

-- name: ReleaseOrder :one
-- ReleaseOrder hands an order in progress back by its performer (→ WAITING, no performer): it
-- returns to the new-orders count, leaves the performer's, gives back the performer's place under
-- the cap, starts the performer's cool-down on it and the ledger records the release. The
-- customer's reservation stays. No row means refused. Locks, each CTE reading the rows of the one
-- before: the order, the performer, the cool-down row, the counter slots (new-orders, then
-- performer).
WITH r AS (
    UPDATE orders o SET status = 'WAITING', performer_id = NULL, updated_at = now()
    WHERE o.id = @id AND o.status = 'IN PROGRESS' AND o.performer_id = @performer_id::bigint
    RETURNING o.id, o.customer_id, o.description, o.price, o.status, o.created_at
), freed AS (
    UPDATE order_users u SET holding = u.holding - 1 FROM r WHERE u.id = @performer_id::bigint
    RETURNING r.id AS order_id, u.id AS performer_id
), cooled AS (
    INSERT INTO order_cooldowns (order_id, performer_id, until)
    SELECT freed.order_id, freed.performer_id, now() + @cooldown::interval FROM freed
    ON CONFLICT (order_id, performer_id) DO UPDATE SET until = excluded.until
    RETURNING performer_id
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), c.delta
    FROM cooled, LATERAL (VALUES (1, 'waiting', 0::bigint, 1::bigint), (2, 'performer', cooled.performer_id, -1::bigint))
        AS c(rank, scope, owner_id, delta)
    ORDER BY c.rank
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
), ledger AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) SELECT @performer_id::bigint, r.id, 'release', 0 FROM r
)
SELECT r.id, r.customer_id, r.description, r.price, r.status, r.created_at FROM r;

-- name: RejectOrder :one
-- RejectOrder sends a READY order of the calling customer back (→ WAITING, no performer): it
-- returns to the new-orders count, leaves its performer's, gives back the performer's place under
-- the cap, starts the performer's cool-down on it, and the ledger records the rejection (user: the
-- performer removed). The customer's reservation stays. No row means refused. Locks, each CTE
-- reading the rows of the one before: the order (cur: FOR UPDATE reads the performer of the
-- version it locked), the performer, the cool-down row, the counter slots (new-orders, then
-- performer).
WITH cur AS (
    SELECT o.id, o.performer_id FROM orders o
    WHERE o.id = @id AND o.status = 'READY' AND o.customer_id = @customer_id
    FOR UPDATE
), r AS (
    UPDATE orders o SET status = 'WAITING', performer_id = NULL, updated_at = now()
    FROM cur WHERE o.id = cur.id
    RETURNING o.id, o.customer_id, cur.performer_id, o.description, o.price, o.status, o.created_at
), freed AS (
    UPDATE order_users u SET holding = u.holding - 1 FROM r WHERE u.id = r.performer_id
    RETURNING r.id AS order_id, u.id AS performer_id
), cooled AS (
    INSERT INTO order_cooldowns (order_id, performer_id, until)
    SELECT freed.order_id, freed.performer_id, now() + @cooldown::interval FROM freed
    ON CONFLICT (order_id, performer_id) DO UPDATE SET until = excluded.until
    RETURNING performer_id
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), c.delta
    FROM cooled, LATERAL (VALUES (1, 'waiting', 0::bigint, 1::bigint), (2, 'performer', cooled.performer_id, -1::bigint))
        AS c(rank, scope, owner_id, delta)
    ORDER BY c.rank
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
), ledger AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) SELECT r.performer_id, r.id, 'reject', 0 FROM r
)
SELECT r.id, r.customer_id, r.performer_id, r.description, r.price, r.status, r.created_at FROM r;

-- name: RejectCancelOrder :one
-- RejectCancelOrder rejects a READY order of the calling customer and cancels it in one statement
-- (→ CANCELLED, no performer): as RejectOrder for the performer (its place under the cap given
-- back, the order out of its list) and as CancelOrder for the customer (the reservation returns
-- to the free balance); the order never passes through WAITING, so no performer can take it in
-- between, and no cool-down is needed. The ledger records the rejection (user: the performer
-- removed) and the cancel. No row means refused. Locks, each CTE reading the rows of the one
-- before: the order, the customer, the performer, the performer's counter slot.
WITH cur AS (
    SELECT o.id, o.performer_id FROM orders o
    WHERE o.id = @id AND o.status = 'READY' AND o.customer_id = @customer_id
    FOR UPDATE
), r AS (
    UPDATE orders o SET status = 'CANCELLED', performer_id = NULL, updated_at = now()
    FROM cur WHERE o.id = cur.id
    RETURNING o.id, o.customer_id, cur.performer_id, o.description, o.price, o.held, o.status, o.created_at
), funds AS (
    UPDATE order_users u SET reserved = u.reserved - r.held FROM r WHERE u.id = r.customer_id
    RETURNING r.performer_id
), freed AS (
    UPDATE order_users u SET holding = u.holding - 1 FROM funds WHERE u.id = funds.performer_id
    RETURNING u.id AS performer_id
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT 'performer', freed.performer_id, order_counter_slot(), -1 FROM freed
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
), ledger AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount)
    SELECT v.user_id, r.id, v.kind, 0 FROM r, LATERAL (VALUES (r.performer_id, 'reject'), (r.customer_id, 'cancel')) AS v(user_id, kind)
)
SELECT r.id, r.customer_id, r.description, r.price, r.status, r.created_at FROM r;

-- name: ExpireStaleOrders :one
-- ExpireStaleOrders returns up to batch orders IN PROGRESS untouched since before now() - after
-- (the take or the last move set updated_at) to WAITING, as if each performer had released them:
-- the counters, the performers' places under the cap, their cool-downs and one ledger row
-- ('expire') each. Every replica may run it at once: SKIP LOCKED leaves an order another sweep
-- (or a move) holds, and the UPDATE checks the status again. Locks, as every write, each CTE
-- reading the rows of the one before: the orders (never waiting), the performers in id order,
-- then the new-orders counter slot and the performers' counter slots in id order. The cool-down
-- rows are the orders' own (only a move holding its order writes them), so they wait for nobody.
-- The result is how many orders returned.
WITH stale AS (
    SELECT o.id, o.performer_id FROM orders o
    WHERE o.status = 'IN PROGRESS' AND o.updated_at < now() - @after::interval
    ORDER BY o.updated_at LIMIT @batch FOR UPDATE SKIP LOCKED
), r AS (
    UPDATE orders o SET status = 'WAITING', performer_id = NULL, updated_at = now()
    FROM stale WHERE o.id = stale.id AND o.status = 'IN PROGRESS'
    RETURNING o.id, stale.performer_id
), per AS (
    SELECT r.performer_id, count(*)::bigint AS n FROM r GROUP BY r.performer_id
), held AS (
    SELECT u.id FROM order_users u JOIN per ON per.performer_id = u.id ORDER BY u.id FOR NO KEY UPDATE OF u
), freed AS (
    UPDATE order_users u SET holding = u.holding - per.n FROM held, per
    WHERE u.id = held.id AND per.performer_id = held.id
    RETURNING u.id, per.n
), cooled AS (
    INSERT INTO order_cooldowns (order_id, performer_id, until)
    SELECT r.id, r.performer_id, now() + @cooldown::interval FROM r
    ON CONFLICT (order_id, performer_id) DO UPDATE SET until = excluded.until
), counted AS (
    INSERT INTO order_counters (scope, owner_id, slot, n)
    SELECT c.scope, c.owner_id, order_counter_slot(), c.n FROM (
        SELECT 0 AS rank, 'waiting' AS scope, 0::bigint AS owner_id, sum(freed.n)::bigint AS n FROM freed HAVING count(*) > 0
        UNION ALL
        SELECT 1, 'performer', freed.id, -freed.n FROM freed
    ) AS c
    ORDER BY c.rank, c.owner_id
    ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
), ledger AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) SELECT r.performer_id, r.id, 'expire', 0 FROM r
)
SELECT count(*)::bigint FROM r;

-- name: StaleReadyOrders :many
-- StaleReadyOrders lists up to batch orders READY since before now() - after that their customer
-- neither accepted nor rejected, oldest first, with their customer: the sweep accepts each in a
-- transaction of its own, as the customer would.
SELECT o.id, o.customer_id FROM orders o
WHERE o.status = 'READY' AND o.updated_at < now() - @after::interval
ORDER BY o.updated_at LIMIT @batch;

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
