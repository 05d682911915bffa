-- The auth library's queries (sqlc: gen/authstatedb), over schema.sql, sessions_schema.sql and
-- offsets_schema.sql.

-- name: CreateTablesLock :exec
-- CreateTablesLock serialises the CREATE statements of replicas starting together (New): CREATE
-- TABLE IF NOT EXISTS is not safe against a concurrent creation of the same table.
SELECT pg_advisory_xact_lock(@key::bigint);

-- name: UseID :execrows
-- UseID records id as used until expires_at: one row for exactly one caller (the primary key decides).
INSERT INTO auth_used_ids (id, expires_at) VALUES (@id, @expires_at) ON CONFLICT (id) DO NOTHING;

-- name: SweepUsedIDs :execrows
-- SweepUsedIDs deletes the used ids whose tokens expired.
DELETE FROM auth_used_ids WHERE expires_at < now();

-- name: StartTelegramLogin :exec
-- StartTelegramLogin records an unconfirmed messenger login.
INSERT INTO auth_telegram_logins (token, aud, session, expires_at) VALUES (@token, @aud, @session, @expires_at);

-- name: TelegramLoginPending :one
-- TelegramLoginPending reports whether token is a live, unconfirmed login.
SELECT EXISTS (SELECT 1 FROM auth_telegram_logins WHERE token = @token AND usr IS NULL AND expires_at > now());

-- name: ConfirmTelegramLogin :execrows
-- ConfirmTelegramLogin sets the user of a live, unconfirmed login: of two confirmations racing,
-- exactly one updates the row.
UPDATE auth_telegram_logins SET usr = @usr WHERE token = @token AND usr IS NULL AND expires_at > now();

-- name: TakeTelegramLogin :one
-- TakeTelegramLogin deletes a live, confirmed login and returns it, to exactly one of the requests
-- racing for it.
DELETE FROM auth_telegram_logins WHERE token = @token AND usr IS NOT NULL AND expires_at > now()
RETURNING aud, session, expires_at, usr;

-- name: SweepTelegramLogins :execrows
-- SweepTelegramLogins deletes the expired messenger logins.
DELETE FROM auth_telegram_logins WHERE expires_at < now();

-- name: RevokeSession :exec
-- RevokeSession records the session of hash as revoked until expires_at (a later end wins).
INSERT INTO auth_revoked_sessions (hash, expires_at) VALUES (@hash, @expires_at)
ON CONFLICT (hash) DO UPDATE SET expires_at = greatest(auth_revoked_sessions.expires_at, EXCLUDED.expires_at);

-- name: NotifySessionRevoked :exec
-- NotifySessionRevoked announces a revocation on channel with the hash in hex; it is sent when the
-- transaction commits.
SELECT pg_notify(@channel::text, @payload::text);

-- name: RevokedSessionsSince :many
-- RevokedSessionsSince lists the live revocations made at or after since.
SELECT hash, expires_at, revoked_at FROM auth_revoked_sessions WHERE revoked_at >= @since AND expires_at > now();

-- name: SweepRevokedSessions :execrows
-- SweepRevokedSessions deletes up to 1000 revocations whose sessions ended (a batch of a sweep).
DELETE FROM auth_revoked_sessions
WHERE hash IN (SELECT r.hash FROM auth_revoked_sessions r WHERE r.expires_at < now() LIMIT 1000);

-- name: TryAdvisoryLock :one
-- TryAdvisoryLock takes the session-level advisory lock key when it is free (Leader).
SELECT pg_try_advisory_lock(@key::bigint);

-- name: HoldsAdvisoryLock :one
-- HoldsAdvisoryLock reports whether this session holds the advisory lock key (a bigint key shows
-- in pg_locks as its high and low 32 bits, classid and objid).
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted
    AND pid = pg_backend_pid() AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = @key::bigint);

-- name: TelegramOffset :one
-- TelegramOffset is the getUpdates offset saved for bot within ttl_seconds (telegram.OffsetTTL).
SELECT next_update FROM auth_telegram_offsets
WHERE bot = @bot AND saved_at > now() - make_interval(secs => @ttl_seconds::float8);

-- name: SaveTelegramOffset :exec
-- SaveTelegramOffset records next_update for bot. It never moves the offset back (a late poller
-- cannot undo a newer one's progress) unless the saved one is older than ttl_seconds: Telegram has
-- dropped every update it confirmed, and may number new ones below it.
INSERT INTO auth_telegram_offsets AS o (bot, next_update) VALUES (@bot, @next_update)
ON CONFLICT (bot) DO UPDATE SET next_update = EXCLUDED.next_update, saved_at = now()
WHERE o.next_update < EXCLUDED.next_update OR o.saved_at <= now() - make_interval(secs => @ttl_seconds::float8);
