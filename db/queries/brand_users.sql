-- name: CreateBrandUser :one
-- CreateBrandUser inserts a user; a taken email (any case, unicode_fold) violates brand_users_email_key.
INSERT INTO brand_users (email, name, password_hash, is_admin)
VALUES ($1, $2, $3, $4)
RETURNING id, email, name, is_admin, created_at;

-- name: GetBrandUserCredentials :one
-- GetBrandUserCredentials finds a user's id, password hash and role by email, without regard to case (unicode_fold).
SELECT id, password_hash, is_admin FROM brand_users WHERE unicode_fold(email) = unicode_fold(sqlc.arg(email)::text);

-- name: GetBrandUserByToken :one
-- GetBrandUserByToken resolves an unexpired access token hash to its user and the token's expiry
-- ('infinity', which time.Time cannot hold, reads as the last day of 9999).
SELECT u.id, u.is_admin, least(t.expires_at, '9999-12-31 00:00:00+00'::timestamptz)::timestamptz AS expires_at
FROM brand_tokens t JOIN brand_users u ON u.id = t.user_id
WHERE t.token_hash = $1 AND t.expires_at > sqlc.arg(now);

-- name: GetBrandUserPasswordHashForUpdate :one
-- GetBrandUserPasswordHashForUpdate reads the user's password hash and locks the row, so two
-- concurrent password changes apply one after the other.
SELECT password_hash FROM brand_users WHERE id = $1 FOR UPDATE;

-- name: SetBrandUserPassword :exec
-- SetBrandUserPassword replaces the user's password hash.
UPDATE brand_users SET password_hash = $2 WHERE id = $1;

-- name: UpdateBrandUserProfile :execrows
-- UpdateBrandUserProfile changes the name and/or email of the user; NULL keeps a value.
UPDATE brand_users
SET name = coalesce(sqlc.narg(name), name), email = coalesce(sqlc.narg(email), email)
WHERE id = sqlc.arg(id);

-- name: GetBrandUserByEmailForUpdate :one
-- GetBrandUserByEmailForUpdate finds a user by email (any case, unicode_fold) and locks the row.
SELECT id, is_admin FROM brand_users WHERE unicode_fold(email) = unicode_fold(sqlc.arg(email)::text) FOR UPDATE;

-- name: PromoteBrandUser :exec
-- PromoteBrandUser makes the user an admin with the given password hash.
UPDATE brand_users SET is_admin = true, password_hash = $2 WHERE id = $1;

-- name: DeleteAllBrandTokens :exec
-- DeleteAllBrandTokens revokes every token of the user.
DELETE FROM brand_tokens WHERE user_id = $1;

-- name: GetBrandMeRows :many
-- GetBrandMeRows reads a user and its subscribed brands, oldest subscription first, in one round
-- trip: one row per subscription, the brand as brands_counted shows it. No row: the user has no
-- subscription or is gone (GetBrandProfile tells which).
SELECT u.id, u.email, u.name, u.is_admin, u.created_at, sqlc.embed(b)
FROM brand_users u
JOIN brand_subscriptions s ON s.user_id = u.id
JOIN brands_counted b ON b.id = s.brand_id
WHERE u.id = $1
ORDER BY s.seq;

-- name: GetBrandProfile :one
-- GetBrandProfile reads a user's profile; no row means the user is gone.
SELECT id, email, name, is_admin, created_at FROM brand_users WHERE id = $1;
