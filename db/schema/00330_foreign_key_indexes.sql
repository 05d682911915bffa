-- +goose NO TRANSACTION
-- +goose Up
-- Every foreign key gets an index on its referencing columns (issue 43): without one, each delete
-- of a referenced row scans the whole referencing table to check it. Removing 200 orders from a
-- 1.2M-row ledger took 60 s without order_ledger (order_id), 38 ms with it. The indexes are built
-- CONCURRENTLY, so a live database keeps taking writes meanwhile; CONCURRENTLY cannot run inside a
-- transaction, hence NO TRANSACTION above (goose then runs each statement on its own). A build
-- that failed half-way leaves an invalid index behind, which the DROP before each CREATE clears
-- when the migration is run again. impl/platform/migrate's TestSchema_EveryForeignKeyHasAnIndex
-- keeps the list complete.
DROP INDEX CONCURRENTLY IF EXISTS order_ledger_order;
CREATE INDEX CONCURRENTLY order_ledger_order ON order_ledger (order_id) WHERE order_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS order_tokens_user;
CREATE INDEX CONCURRENTLY order_tokens_user ON order_tokens (user_id);
DROP INDEX CONCURRENTLY IF EXISTS order_cooldowns_performer;
CREATE INDEX CONCURRENTLY order_cooldowns_performer ON order_cooldowns (performer_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS order_cooldowns_performer;
DROP INDEX CONCURRENTLY IF EXISTS order_tokens_user;
DROP INDEX CONCURRENTLY IF EXISTS order_ledger_order;
