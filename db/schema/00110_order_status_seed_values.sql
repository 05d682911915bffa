-- +goose Up
-- Order statuses are stored as the seed writes them: 'IN PROGRESS' with a space (orders-api.md:
-- "one of WAITING, IN PROGRESS, READY, COMPLETED"), so the wire, the domain and the table hold one
-- spelling and nothing translates between them. CANCELLED is a customer's withdrawal of a waiting
-- order; like WAITING it has no performer.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders DROP CONSTRAINT orders_check;
UPDATE orders SET status = 'IN PROGRESS' WHERE status = 'IN_PROGRESS';
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('WAITING', 'IN PROGRESS', 'READY', 'COMPLETED', 'CANCELLED'));
-- Only a waiting or cancelled order lacks a performer (a cancel is only ever of a waiting order).
ALTER TABLE orders ADD CONSTRAINT orders_check
    CHECK ((status IN ('WAITING', 'CANCELLED')) = (performer_id IS NULL));

-- +goose Down
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders DROP CONSTRAINT orders_check;
UPDATE orders SET status = 'IN_PROGRESS' WHERE status = 'IN PROGRESS';
ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('WAITING', 'IN_PROGRESS', 'READY', 'COMPLETED'));
ALTER TABLE orders ADD CONSTRAINT orders_check CHECK ((status = 'WAITING') = (performer_id IS NULL));
