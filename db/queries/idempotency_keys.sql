-- name: GetIdempotencyKey :one
-- GetIdempotencyKey reads what a live key holds: its request's hash and its answer.
SELECT request, answer FROM idempotency_keys WHERE scope = @scope AND key = @key AND expires_at >= now();

-- name: ClaimIdempotencyKey :one
-- ClaimIdempotencyKey runs first in the transaction of a keyed write: it takes the key's
-- transaction-level advisory lock unless another live transaction holds it (claimed false: the
-- first request with the key is still running), and reads the request of a key answered
-- meanwhile (answered not NULL). The lock ends with the transaction, or with the session of a
-- process that died, so it never outlives the request that took it.
SELECT pg_try_advisory_xact_lock(@lock::bigint) AS claimed,
       (SELECT k.request FROM idempotency_keys k WHERE k.scope = @scope AND k.key = @key AND k.expires_at >= now()) AS answered;

-- name: AnswerIdempotencyKey :execrows
-- AnswerIdempotencyKey keeps a key's answer in the transaction of the write it answers, so both
-- commit or neither does; a key expired but not yet swept is taken over. No row: a live key holds
-- the answer of another request that committed first, and the write must roll back.
INSERT INTO idempotency_keys (scope, key, request, answer, expires_at)
VALUES (@scope, @key, @request, @answer, @expires_at)
ON CONFLICT (scope, key) DO UPDATE
SET request = EXCLUDED.request, answer = EXCLUDED.answer, expires_at = EXCLUDED.expires_at
WHERE idempotency_keys.expires_at < now();

-- name: DeleteExpiredIdempotencyKeys :execrows
-- DeleteExpiredIdempotencyKeys deletes up to 1000 keys past their expiry (a batch of a sweep).
DELETE FROM idempotency_keys
WHERE (scope, key) IN (SELECT i.scope, i.key FROM idempotency_keys i WHERE i.expires_at < now() LIMIT 1000);
