-- name: CreateOrderToken :exec
-- CreateOrderToken stores the SHA-256 of a new access token.
INSERT INTO order_tokens (hash, user_id, expires_at) VALUES (@hash, @user_id, @expires_at);

-- name: GetOrderTokenUser :one
-- GetOrderTokenUser resolves an unexpired token hash to its user.
SELECT u.id, u.username, u.user_type, t.expires_at
FROM order_tokens t JOIN order_users u ON u.id = t.user_id
WHERE t.hash = @hash AND t.expires_at > now();

-- name: DeleteExpiredOrderTokens :execrows
-- DeleteExpiredOrderTokens removes tokens past their expiry.
DELETE FROM order_tokens WHERE expires_at <= now();
