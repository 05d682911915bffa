-- +goose Up
-- No write path of the orders API queues on one row. Each list counter (the new-orders list, a
-- customer's, a performer's) is split into slots: a writer adds +1/-1 to the slot of its database
-- session (backend pid modulo 16), so concurrent creates and takes on different connections touch
-- different rows, and a list's exact size is the sum of its slots. A slot alone may go negative
-- (an order counted in one slot is taken through another); only the sum means anything, and it is
-- never negative since every take follows its create.
ALTER TABLE order_counters DROP CONSTRAINT order_counters_pkey;
ALTER TABLE order_counters DROP CONSTRAINT order_counters_n_check;
ALTER TABLE order_counters ADD COLUMN slot smallint NOT NULL DEFAULT 0 CHECK (slot BETWEEN 0 AND 15);
ALTER TABLE order_counters ADD PRIMARY KEY (scope, owner_id, slot);

-- order_counter_slot is the slot the current session writes to.
CREATE FUNCTION order_counter_slot() RETURNS smallint
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (pg_backend_pid() % 16)::smallint;

-- order_list_sizes is the exact size of every list: its slots summed.
CREATE VIEW order_list_sizes AS
SELECT scope, owner_id, sum(n)::bigint AS n FROM order_counters GROUP BY scope, owner_id;

-- order_commission is the platform's cut of an order's price, charged to the customer on top of
-- it: 5%, rounded half-up to the kopeck (5% of 0.10 is 0.005 → 0.01; of 0.09, 0.0045 → 0.00). It is
-- the only statement of the formula; the acceptance below charges it and reports it.
CREATE FUNCTION order_commission(price bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (price * 5 + 50) / 100;

-- order_accept is the acceptance of an order by the caller, with every rule of it in one place:
-- the order must exist, be the caller's and be READY, and the customer must afford price plus
-- commission. Then, in the caller's transaction, the customer is debited price + commission, the
-- performer credited the price and a platform slot the commission, each a ledger row, and the
-- order completes. Rows are locked in a fixed order (the order; both users by ascending id; a
-- platform slot chosen by order id), so concurrent acceptances neither deadlock nor pay twice.
-- outcome is 'completed' or the refusal: 'not_found', 'forbidden', 'invalid_state',
-- 'insufficient_funds' (then nothing changed, and balance and commission explain it).
-- +goose StatementBegin
CREATE FUNCTION order_accept(order_id bigint, caller_id bigint,
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

-- +goose Down
DROP FUNCTION order_accept(bigint, bigint);
DROP FUNCTION order_commission(bigint);
DROP VIEW order_list_sizes;
DROP FUNCTION order_counter_slot();
-- Fold the slots back into one row per list before restoring the one-row key.
CREATE TEMPORARY TABLE order_counters_folded AS
SELECT scope, owner_id, sum(n)::bigint AS n FROM order_counters GROUP BY scope, owner_id;
DELETE FROM order_counters;
ALTER TABLE order_counters DROP CONSTRAINT order_counters_pkey;
ALTER TABLE order_counters DROP COLUMN slot;
INSERT INTO order_counters (scope, owner_id, n) SELECT scope, owner_id, n FROM order_counters_folded;
ALTER TABLE order_counters ADD PRIMARY KEY (scope, owner_id);
ALTER TABLE order_counters ADD CONSTRAINT order_counters_n_check CHECK (n >= 0);
