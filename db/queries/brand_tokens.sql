-- name: InsertBrandToken :exec
-- InsertBrandToken records the hash of a newly issued access token and when it expires.
INSERT INTO brand_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3);

-- name: DeleteBrandTokensOfHolder :many
-- DeleteBrandTokensOfHolder revokes every token of the user who holds the unexpired token whose
-- hash is given (a logout: the seed's "resets the user token"), in one statement, and returns the
-- revoked tokens' hashes; no row means the given token was not valid.
DELETE FROM brand_tokens WHERE user_id = (
    SELECT h.user_id FROM brand_tokens h WHERE h.token_hash = $1 AND h.expires_at > sqlc.arg(now)
) RETURNING token_hash;

-- name: DeleteOtherBrandTokens :many
-- DeleteOtherBrandTokens revokes every token of the user except the one whose hash is given, and
-- returns the revoked tokens' hashes.
DELETE FROM brand_tokens WHERE user_id = $1 AND token_hash <> $2 RETURNING token_hash;

-- name: DeleteExpiredBrandTokens :execrows
-- DeleteExpiredBrandTokens removes up to 1000 rows of tokens that expired (they authenticate nobody
-- anyway): a batch of a sweep.
DELETE FROM brand_tokens
WHERE token_hash IN (SELECT t.token_hash FROM brand_tokens t WHERE t.expires_at <= sqlc.arg(now) LIMIT 1000);
