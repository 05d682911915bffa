-- +goose Up
-- order_accept in three statements instead of nine, with the same rules and outcomes: a benchmark
-- of one acceptance showed each statement's executor start-up, not the rows, as most of its cost.
-- (1) The order is read and locked; the refusals that need only the order come from it. (2) The
-- customer is debited price + commission by a conditional UPDATE whose WHERE is the funds check;
-- no row means insufficient funds (then one read fetches the balance for the message, and nothing
-- has changed). (3) One statement credits the performer, then the platform slot (data-dependent on
-- the credit, so the slot is always locked after the performer), writes the three ledger rows and
-- completes the order.
--
-- Locking order, which is what keeps concurrent acceptances free of deadlocks: the order, its
-- customer, its performer, a platform slot. Customers and performers are disjoint (a user's role
-- never changes; only customers create orders and only performers take them), so no acceptance
-- waits for a customer while holding a performer, and the slot is the last lock taken. The ledger's
-- foreign-key checks only share-lock rows the acceptance already holds.
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

-- +goose Down
-- The nine-statement version of 00070.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_accept(order_id bigint, caller_id bigint,
    OUT outcome text, OUT customer_id bigint, OUT performer_id bigint, OUT performer_name text,
    OUT description text, OUT price bigint, OUT commission bigint, OUT balance bigint,
    OUT status text, OUT created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    o orders%ROWTYPE;
BEGIN
    SELECT * INTO o FROM orders WHERE id = order_accept.order_id FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN;
    END IF;
    customer_id := o.customer_id; performer_id := o.performer_id; description := o.description;
    price := o.price; status := o.status; created_at := o.created_at;
    commission := order_commission(o.price);
    IF o.customer_id <> caller_id THEN
        outcome := 'forbidden';
        RETURN;
    END IF;
    IF o.status <> 'READY' THEN
        outcome := 'invalid_state';
        RETURN;
    END IF;
    PERFORM 1 FROM order_users u WHERE u.id IN (o.customer_id, o.performer_id) ORDER BY u.id FOR UPDATE;
    SELECT u.balance INTO balance FROM order_users u WHERE u.id = o.customer_id;
    SELECT u.username INTO performer_name FROM order_users u WHERE u.id = o.performer_id;
    IF balance < o.price + commission THEN
        outcome := 'insufficient_funds';
        RETURN;
    END IF;
    UPDATE order_users u SET balance = u.balance - (o.price + commission) WHERE u.id = o.customer_id
    RETURNING u.balance INTO balance;
    UPDATE order_users u SET balance = u.balance + o.price WHERE u.id = o.performer_id;
    UPDATE order_platform_slots s SET balance = s.balance + commission WHERE s.slot = o.id % 16;
    INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES
        (o.customer_id, o.id, 'payment', -(o.price + commission)),
        (o.performer_id, o.id, 'earning', o.price),
        (NULL, o.id, 'commission', commission);
    UPDATE orders SET status = 'COMPLETED', updated_at = now() WHERE id = o.id;
    status := 'COMPLETED';
    outcome := 'completed';
END
$$;
-- +goose StatementEnd
