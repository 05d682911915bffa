-- name: InsertOrderToken :exec
-- InsertOrderToken records the hash of a newly issued access token and when it expires.
INSERT INTO order_tokens (token_hash, user_id, expires_at) VALUES (@token_hash, @user_id, @expires_at);

-- name: GetOrderUserByToken :one
-- GetOrderUserByToken resolves the hash of a token unexpired at now to its user.
SELECT u.id, u.username, u.user_type, t.expires_at
FROM order_tokens t JOIN order_users u ON u.id = t.user_id
WHERE t.token_hash = @token_hash AND t.expires_at > sqlc.arg(now);

-- name: DeleteExpiredOrderTokens :execrows
-- DeleteExpiredOrderTokens removes up to 1000 rows of tokens that expired by now (they authenticate
-- nobody anyway): a batch of a sweep.
DELETE FROM order_tokens
WHERE token_hash IN (SELECT t.token_hash FROM order_tokens t WHERE t.expires_at <= sqlc.arg(now) LIMIT 1000);
