-- +goose Up
-- Idempotency-Key, exactly once (impl/kit/idempotency): a key's row is now written by the
-- transaction of the write it answers, with its answer, so a row always has one, and a request
-- still running holds the key by a transaction-level advisory lock instead of a row with a lease
-- (running_until), which a dead process lost only when the lease ran out. Rows of requests that
-- were running under the old scheme are dropped: their requests either committed nothing or are
-- repeated by their clients. scope is now the SHA-256 of the operation and the caller (the user,
-- or an anonymous caller's client network): rows kept under the old scope (the raw credentials)
-- match no request any more and expire within the day.
DELETE FROM idempotency_keys WHERE answer IS NULL;
ALTER TABLE idempotency_keys DROP COLUMN running_until, ALTER COLUMN answer SET NOT NULL;

-- +goose Down
ALTER TABLE idempotency_keys ALTER COLUMN answer DROP NOT NULL,
    ADD COLUMN running_until timestamptz NOT NULL DEFAULT now();
