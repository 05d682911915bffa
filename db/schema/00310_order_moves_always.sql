-- +goose Up
-- Every order can always move, and no performer holds what is not theirs (issue 30):
--
-- * order_users.holding counts every order a performer holds, IN PROGRESS and READY: pass no
--   longer gives a place back, acceptance and the customer's new rejection do (as release and the
--   stale-order return always did). Recounted here from the orders.
-- * A READY order its customer rejects returns to WAITING without its performer (ledger kind
--   'reject'); a performer whose order was rejected, released or expired may not take that order
--   again until order_cooldowns says so.
-- * The commission is 5% rounded up to the kopeck, so every order pays at least 0.01; an order
--   is charged what it reserved at creation (held - price), so an order created under the old
--   half-up rounding costs what it was quoted.
--
-- The lock order of every write of an order (docs/orders.md#lock-order): the order row, its
-- customer's row, its performer's row, the order's cool-down rows, the list counter slots
-- (new-orders, then customer, then performer), a platform slot. order_take and order_accept
-- below follow it; the statements in db/queries/orders.sql chain their CTEs by the rows they
-- return so each runs after the one before it.

CREATE OR REPLACE FUNCTION order_commission(price bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (price * 5 + 99) / 100;

UPDATE order_users u SET holding = (SELECT count(*) FROM orders o
    WHERE o.performer_id = u.id AND o.status IN ('IN PROGRESS', 'READY'))
WHERE u.user_type = 'Performer';

-- A performer's order was rejected, released or expired: that performer may not take it again
-- before until. Written only by a move that holds the order's row, so its rows are never
-- contended; swept once expired (SKIP LOCKED).
CREATE TABLE order_cooldowns (
    order_id     bigint      NOT NULL REFERENCES orders (id),
    performer_id bigint      NOT NULL REFERENCES order_users (id),
    until        timestamptz NOT NULL,
    PRIMARY KEY (order_id, performer_id)
);
CREATE INDEX order_cooldowns_until ON order_cooldowns (until);

-- The sweep that accepts READY orders left unanswered finds them by when they became READY.
CREATE INDEX orders_ready_updated ON orders (updated_at) WHERE status = 'READY';

ALTER TABLE order_ledger DROP CONSTRAINT order_ledger_kind_check;
ALTER TABLE order_ledger ADD CONSTRAINT order_ledger_kind_check
    CHECK (kind IN ('grant', 'payment', 'earning', 'commission', 'cancel', 'release', 'expire', 'reject'));

-- order_accept as in 00111, but the commission charged is what the order reserved for it (held -
-- price; the formula only for an order from before reservations), and the credit to the
-- performer also gives back the performer's place under the cap. Locks: the order, its customer,
-- its performer, a platform slot.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_accept(order_id bigint, caller_id bigint,
    OUT outcome text, OUT customer_id bigint, OUT performer_id bigint, OUT performer_name text,
    OUT description text, OUT price bigint, OUT commission bigint, OUT balance bigint,
    OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    hold bigint;
BEGIN
    SELECT o.customer_id, o.performer_id, o.description, o.price, o.status, o.created_at,
           CASE WHEN o.held > 0 THEN o.held - o.price ELSE order_commission(o.price) END, o.held
    INTO customer_id, performer_id, description, price, status, created_at, commission, hold
    FROM orders o WHERE o.id = order_accept.order_id FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN;
    END IF;
    IF customer_id <> caller_id THEN
        outcome := 'forbidden';
        RETURN;
    END IF;
    IF status <> 'READY' THEN
        outcome := 'invalid_state';
        RETURN;
    END IF;
    UPDATE order_users u SET balance = u.balance - (price + commission), reserved = u.reserved - hold
    WHERE u.id = order_accept.customer_id AND u.balance - (u.reserved - hold) >= price + commission
    RETURNING u.balance INTO balance;
    IF NOT FOUND THEN
        SELECT u.balance INTO balance FROM order_users u WHERE u.id = order_accept.customer_id;
        outcome := 'insufficient_funds';
        RETURN;
    END IF;
    WITH credit AS (
        UPDATE order_users u SET balance = u.balance + price, holding = u.holding - 1
        WHERE u.id = order_accept.performer_id
        RETURNING u.username
    ), platform AS (
        UPDATE order_platform_slots s SET balance = s.balance + commission
        FROM credit WHERE s.slot = order_accept.order_id % 16
    ), ledger AS (
        INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES
            (order_accept.customer_id, order_accept.order_id, 'payment', -(price + commission)),
            (order_accept.performer_id, order_accept.order_id, 'earning', price),
            (NULL, order_accept.order_id, 'commission', commission)
    ), done AS (
        UPDATE orders o SET status = 'COMPLETED', updated_at = now() WHERE o.id = order_accept.order_id
    )
    SELECT credit.username INTO performer_name FROM credit;
    status := 'COMPLETED';
    outcome := 'completed';
END
$$;
-- +goose StatementEnd

-- order_take as in 00111, with the cool-down: a performer whose order was rejected, released or
-- expired gets 'cooling_down' (until: when it may take it again) instead of the order. Locks: the
-- order, the performer, the counter slots (new-orders, then performer).
DROP FUNCTION order_take(bigint, bigint, integer);
-- +goose StatementBegin
CREATE FUNCTION order_take(order_id bigint, performer_id bigint, max_held integer,
    OUT outcome text, OUT held integer, OUT until timestamptz, OUT customer_id bigint, OUT description text,
    OUT price bigint, OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM orders o WHERE o.id = order_take.order_id AND o.status = 'WAITING' FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_waiting';
        RETURN;
    END IF;
    SELECT c.until INTO until FROM order_cooldowns c
    WHERE c.order_id = order_take.order_id AND c.performer_id = order_take.performer_id AND c.until > now();
    IF FOUND THEN
        outcome := 'cooling_down';
        RETURN;
    END IF;
    UPDATE order_users u SET holding = u.holding + 1
    WHERE u.id = order_take.performer_id AND u.holding < max_held
    RETURNING u.holding INTO held;
    IF NOT FOUND THEN
        SELECT u.holding INTO held FROM order_users u WHERE u.id = order_take.performer_id;
        outcome := 'too_many';
        RETURN;
    END IF;
    WITH t AS (
        UPDATE orders o SET status = 'IN PROGRESS', performer_id = order_take.performer_id, updated_at = now()
        WHERE o.id = order_take.order_id
        RETURNING o.id, o.customer_id, o.description, o.price, o.status, o.created_at
    ), counted AS (
        INSERT INTO order_counters (scope, owner_id, slot, n)
        SELECT c.scope, c.owner_id, order_counter_slot(), c.delta
        FROM t, LATERAL (VALUES (1, 'waiting', 0::bigint, -1::bigint), (2, 'performer', order_take.performer_id, 1::bigint))
            AS c(rank, scope, owner_id, delta)
        ORDER BY c.rank
        ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
    )
    SELECT t.customer_id, t.description, t.price, t.status, t.created_at
    INTO customer_id, description, price, status, created_at FROM t;
    outcome := 'taken';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION order_take(bigint, bigint, integer);
-- +goose StatementBegin
CREATE FUNCTION order_take(order_id bigint, performer_id bigint, max_held integer,
    OUT outcome text, OUT held integer, OUT customer_id bigint, OUT description text, OUT price bigint,
    OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM orders o WHERE o.id = order_take.order_id AND o.status = 'WAITING' FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_waiting';
        RETURN;
    END IF;
    UPDATE order_users u SET holding = u.holding + 1
    WHERE u.id = order_take.performer_id AND u.holding < max_held
    RETURNING u.holding INTO held;
    IF NOT FOUND THEN
        SELECT u.holding INTO held FROM order_users u WHERE u.id = order_take.performer_id;
        outcome := 'too_many';
        RETURN;
    END IF;
    WITH t AS (
        UPDATE orders o SET status = 'IN PROGRESS', performer_id = order_take.performer_id, updated_at = now()
        WHERE o.id = order_take.order_id
        RETURNING o.id, o.customer_id, o.description, o.price, o.status, o.created_at
    ), counted AS (
        INSERT INTO order_counters (scope, owner_id, slot, n)
        SELECT c.scope, c.owner_id, order_counter_slot(), c.delta
        FROM t, LATERAL (VALUES ('waiting', 0::bigint, -1::bigint), ('performer', order_take.performer_id, 1::bigint)) AS c(scope, owner_id, delta)
        ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
    )
    SELECT t.customer_id, t.description, t.price, t.status, t.created_at
    INTO customer_id, description, price, status, created_at FROM t;
    outcome := 'taken';
END
$$;
-- +goose StatementEnd
DELETE FROM order_ledger WHERE kind = 'reject';
ALTER TABLE order_ledger DROP CONSTRAINT order_ledger_kind_check;
ALTER TABLE order_ledger ADD CONSTRAINT order_ledger_kind_check
    CHECK (kind IN ('grant', 'payment', 'earning', 'commission', 'cancel', 'release', 'expire'));
DROP INDEX orders_ready_updated;
DROP TABLE order_cooldowns;
UPDATE order_users u SET holding = (SELECT count(*) FROM orders o
    WHERE o.performer_id = u.id AND o.status = 'IN PROGRESS')
WHERE u.user_type = 'Performer';
CREATE OR REPLACE FUNCTION order_commission(price bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (price * 5 + 50) / 100;
-- The 00111 acceptance.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_accept(order_id bigint, caller_id bigint,
    OUT outcome text, OUT customer_id bigint, OUT performer_id bigint, OUT performer_name text,
    OUT description text, OUT price bigint, OUT commission bigint, OUT balance bigint,
    OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    hold bigint;
BEGIN
    SELECT o.customer_id, o.performer_id, o.description, o.price, o.status, o.created_at, order_commission(o.price), o.held
    INTO customer_id, performer_id, description, price, status, created_at, commission, hold
    FROM orders o WHERE o.id = order_accept.order_id FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN;
    END IF;
    IF customer_id <> caller_id THEN
        outcome := 'forbidden';
        RETURN;
    END IF;
    IF status <> 'READY' THEN
        outcome := 'invalid_state';
        RETURN;
    END IF;
    UPDATE order_users u SET balance = u.balance - (price + commission), reserved = u.reserved - hold
    WHERE u.id = order_accept.customer_id AND u.balance - (u.reserved - hold) >= price + commission
    RETURNING u.balance INTO balance;
    IF NOT FOUND THEN
        SELECT u.balance INTO balance FROM order_users u WHERE u.id = order_accept.customer_id;
        outcome := 'insufficient_funds';
        RETURN;
    END IF;
    WITH credit AS (
        UPDATE order_users u SET balance = u.balance + price WHERE u.id = order_accept.performer_id
        RETURNING u.username
    ), platform AS (
        UPDATE order_platform_slots s SET balance = s.balance + commission
        FROM credit WHERE s.slot = order_accept.order_id % 16
    ), ledger AS (
        INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES
            (order_accept.customer_id, order_accept.order_id, 'payment', -(price + commission)),
            (order_accept.performer_id, order_accept.order_id, 'earning', price),
            (NULL, order_accept.order_id, 'commission', commission)
    ), done AS (
        UPDATE orders o SET status = 'COMPLETED', updated_at = now() WHERE o.id = order_accept.order_id
    )
    SELECT credit.username INTO performer_name FROM credit;
    status := 'COMPLETED';
    outcome := 'completed';
END
$$;
-- +goose StatementEnd
