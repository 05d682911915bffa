-- name: InsertBrandToken :exec
-- InsertBrandToken records the hash of a newly issued access token.
INSERT INTO brand_tokens (token_hash, user_id) VALUES ($1, $2);

-- name: DeleteBrandToken :execrows
-- DeleteBrandToken revokes one access token, by hash.
DELETE FROM brand_tokens WHERE token_hash = $1;

-- name: DeleteOtherBrandTokens :exec
-- DeleteOtherBrandTokens revokes every token of the user except the one whose hash is given.
DELETE FROM brand_tokens WHERE user_id = $1 AND token_hash <> $2;
