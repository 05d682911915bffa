-- +goose Up
-- Money is reserved when an order is published, so an order a performer finishes can always be
-- paid, and a performer holds a bounded number of orders at once; the new moves (cancel, release,
-- the return of a stale order) keep both exact.
--
-- order_users.reserved is what a customer's open orders (WAITING, IN PROGRESS, READY) will cost:
-- the sum of their orders.held. It can never exceed the balance (CHECK), and a create that would
-- push it past the balance matches no row of its conditional UPDATE and is refused. Acceptance
-- takes an order's cost out of balance and reserved together, so it cannot lack the money.
-- order_users.holding is how many orders a performer has IN PROGRESS; take raises it only below
-- the configured cap, pass, release and the stale-order return lower it.
ALTER TABLE order_users ADD COLUMN reserved bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0);
ALTER TABLE order_users ADD COLUMN holding integer NOT NULL DEFAULT 0 CHECK (holding >= 0);
-- orders.held is what the order reserved of its customer's balance at creation: its price plus
-- commission; 0 for an order published before this migration that the balance could not cover
-- (acceptance then checks the funds as before). It is kept after the order closes, as a record.
ALTER TABLE orders ADD COLUMN held bigint NOT NULL DEFAULT 0 CHECK (held >= 0);

-- Existing open orders reserve, in id order per customer, while the running total fits the
-- balance; the rest stay unreserved (held 0).
WITH open AS (
    SELECT o.id, o.customer_id, o.price + order_commission(o.price) AS cost,
           sum(o.price + order_commission(o.price)) OVER (PARTITION BY o.customer_id ORDER BY o.id) AS running
    FROM orders o WHERE o.status IN ('WAITING', 'IN PROGRESS', 'READY')
)
UPDATE orders o SET held = open.cost
FROM open JOIN order_users u ON u.id = open.customer_id
WHERE o.id = open.id AND open.running <= u.balance;
UPDATE order_users u SET reserved = r.total
FROM (SELECT customer_id, sum(held)::bigint AS total FROM orders
      WHERE status IN ('WAITING', 'IN PROGRESS', 'READY') GROUP BY customer_id) r
WHERE u.id = r.customer_id;
UPDATE order_users u SET holding = h.n
FROM (SELECT performer_id, count(*)::integer AS n FROM orders WHERE status = 'IN PROGRESS' GROUP BY performer_id) h
WHERE u.id = h.performer_id;
ALTER TABLE order_users ADD CONSTRAINT order_users_reserved_funded CHECK (reserved <= balance);

-- The stale-order sweep finds IN PROGRESS orders by when they were last touched.
CREATE INDEX orders_in_progress_updated ON orders (updated_at) WHERE status = 'IN PROGRESS';

-- The ledger also records the moves that change no balance (amount 0): a customer's cancel, a
-- performer's release, the return of a stale order to WAITING (user: the performer who held it).
ALTER TABLE order_ledger DROP CONSTRAINT order_ledger_kind_check;
ALTER TABLE order_ledger ADD CONSTRAINT order_ledger_kind_check
    CHECK (kind IN ('grant', 'payment', 'earning', 'commission', 'cancel', 'release', 'expire'));

-- order_accept, as in 00090, but the debit also ends the order's reservation: balance and
-- reserved fall by the cost and the order's hold. For a reserved order (held = cost) the funds
-- check, balance - (reserved - held) >= cost, is reserved <= balance, which the CHECK guarantees:
-- such an acceptance is never refused for funds. An unreserved order from before 00111 (held 0)
-- is paid only from money no other open order has reserved.
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

-- order_take makes a performer the performer of a WAITING order, if the performer holds fewer
-- than max_held orders IN PROGRESS. Like every move, it locks the order first (FOR UPDATE of a
-- WAITING order: of concurrent takes of one order exactly one finds it WAITING), then the user
-- (the performer's holding raised within the cap by a conditional UPDATE, so concurrent takes by
-- one performer never pass the cap). Every write of the orders API locks in the order: orders,
-- then their customer, then their performer, so no two wait on each other in a cycle. outcome:
-- 'taken'; 'not_waiting' (nothing changed; the caller explains it); 'too_many' (nothing changed;
-- held is the performer's count).
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

-- +goose Down
DROP FUNCTION order_take(bigint, bigint, integer);
-- The 00090 acceptance.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_accept(order_id bigint, caller_id bigint,
    OUT outcome text, OUT customer_id bigint, OUT performer_id bigint, OUT performer_name text,
    OUT description text, OUT price bigint, OUT commission bigint, OUT balance bigint,
    OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT o.customer_id, o.performer_id, o.description, o.price, o.status, o.created_at, order_commission(o.price)
    INTO customer_id, performer_id, description, price, status, created_at, commission
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
    UPDATE order_users u SET balance = u.balance - (price + commission)
    WHERE u.id = order_accept.customer_id AND u.balance >= price + commission
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
DELETE FROM order_ledger WHERE kind IN ('cancel', 'release', 'expire');
ALTER TABLE order_ledger DROP CONSTRAINT order_ledger_kind_check;
ALTER TABLE order_ledger ADD CONSTRAINT order_ledger_kind_check CHECK (kind IN ('grant', 'payment', 'earning', 'commission'));
DROP INDEX orders_in_progress_updated;
ALTER TABLE order_users DROP CONSTRAINT order_users_reserved_funded;
ALTER TABLE orders DROP COLUMN held;
ALTER TABLE order_users DROP COLUMN holding;
ALTER TABLE order_users DROP COLUMN reserved;
