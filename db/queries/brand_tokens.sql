-- name: InsertBrandToken :exec
-- InsertBrandToken records the hash of a newly issued access token and when it expires.
INSERT INTO brand_tokens (token_hash, user_id, expires_at) VALUES ($1, $2, $3);

-- name: DeleteBrandToken :execrows
-- DeleteBrandToken revokes one unexpired access token, by hash; 0 rows means it was not valid.
DELETE FROM brand_tokens WHERE token_hash = $1 AND expires_at > sqlc.arg(now);

-- name: DeleteOtherBrandTokens :many
-- DeleteOtherBrandTokens revokes every token of the user except the one whose hash is given, and
-- returns the revoked tokens' hashes.
DELETE FROM brand_tokens WHERE user_id = $1 AND token_hash <> $2 RETURNING token_hash;

-- name: DeleteExpiredBrandTokens :execrows
-- DeleteExpiredBrandTokens removes the rows of tokens that expired (they authenticate nobody anyway).
DELETE FROM brand_tokens WHERE expires_at <= sqlc.arg(now);
