-- name: ClaimIdempotencyKey :execrows
-- ClaimIdempotencyKey takes a key for a request to run: a key not seen, one expired, or one whose
-- first run of this same request stopped answering (running_until passed without an answer).
INSERT INTO idempotency_keys (scope, key, request, running_until, expires_at)
VALUES (@scope, @key, @request, @running_until, @expires_at)
ON CONFLICT (scope, key) DO UPDATE
SET request = EXCLUDED.request, answer = NULL, running_until = EXCLUDED.running_until, expires_at = EXCLUDED.expires_at
WHERE idempotency_keys.expires_at < now()
   OR (idempotency_keys.answer IS NULL AND idempotency_keys.running_until < now()
       AND idempotency_keys.request = EXCLUDED.request);

-- name: GetIdempotencyKey :one
-- GetIdempotencyKey reads what a key holds: its request's hash and, once answered, the answer.
SELECT request, answer FROM idempotency_keys WHERE scope = @scope AND key = @key AND expires_at >= now();

-- name: AnswerIdempotencyKey :exec
-- AnswerIdempotencyKey stores the first answer of the request that claimed the key.
UPDATE idempotency_keys SET answer = @answer
WHERE scope = @scope AND key = @key AND request = @request AND answer IS NULL;

-- name: ReleaseIdempotencyKey :exec
-- ReleaseIdempotencyKey frees a key whose request failed on the server's side, so a retry runs it.
DELETE FROM idempotency_keys WHERE scope = @scope AND key = @key AND request = @request AND answer IS NULL;

-- name: DeleteExpiredIdempotencyKeys :execrows
-- DeleteExpiredIdempotencyKeys sweeps the keys past their expiry.
DELETE FROM idempotency_keys WHERE expires_at < now();
