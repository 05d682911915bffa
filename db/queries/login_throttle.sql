-- name: ReserveLoginAttempt :one
-- ReserveLoginAttempt counts one attempt for key unless it already has max in its window; a key
-- without a row or whose window ended starts a new window ending at expires_at. It returns the end
-- of the window counted in, or no row when the key is blocked.
INSERT INTO login_throttle AS t (key, attempts, expires_at)
VALUES (@key, 1, @expires_at)
ON CONFLICT (key) DO UPDATE SET
    attempts   = CASE WHEN t.expires_at <= sqlc.arg(now)::timestamptz THEN 1 ELSE t.attempts + 1 END,
    expires_at = CASE WHEN t.expires_at <= sqlc.arg(now)::timestamptz THEN EXCLUDED.expires_at ELSE t.expires_at END,
    next_slot  = CASE WHEN t.expires_at <= sqlc.arg(now)::timestamptz THEN NULL ELSE t.next_slot END
WHERE t.expires_at <= sqlc.arg(now)::timestamptz OR t.attempts < sqlc.arg(max)::integer
RETURNING expires_at;

-- name: TakeLoginSlot :one
-- TakeLoginSlot schedules one check of a key that reached its limit in a window that has not
-- ended: at the key's next free slot, or now when that has passed, and moves the next free slot
-- one interval on. It returns the slot's start, or no row when that start is more than max_wait
-- away (the key is over its share: the caller refuses) or the key has no such window.
UPDATE login_throttle SET next_slot = greatest(next_slot, sqlc.arg(now)::timestamptz) + sqlc.arg(interval_us)::bigint * interval '1 microsecond'
WHERE key = @key AND expires_at > sqlc.arg(now)::timestamptz
  AND greatest(next_slot, sqlc.arg(now)::timestamptz) <= sqlc.arg(now)::timestamptz + sqlc.arg(max_wait_us)::bigint * interval '1 microsecond'
RETURNING (next_slot - sqlc.arg(interval_us)::bigint * interval '1 microsecond')::timestamptz AS slot;

-- name: GetLoginSlot :one
-- GetLoginSlot is a key's next free slot (NULL when it has none yet) and window end, to tell a
-- client over its share how long to wait.
SELECT next_slot, expires_at FROM login_throttle WHERE key = @key;

-- name: GetLoginThrottleEnd :one
-- GetLoginThrottleEnd is when the window of a key ends, to tell a blocked client how long to wait.
SELECT expires_at FROM login_throttle WHERE key = @key;

-- name: ReleaseLoginAttempt :exec
-- ReleaseLoginAttempt gives back one reserved attempt of the window ending at expires_at (a check
-- that did not happen); a window that has since been replaced is left alone.
UPDATE login_throttle SET attempts = attempts - 1
WHERE key = @key AND expires_at = @expires_at AND attempts > 0;

-- name: DeleteLoginThrottle :exec
-- DeleteLoginThrottle forgets a key's attempts: its password proved right.
DELETE FROM login_throttle WHERE key = @key;

-- name: DeleteExpiredLoginThrottles :execrows
-- DeleteExpiredLoginThrottles deletes up to 1000 rows whose window has ended.
DELETE FROM login_throttle
WHERE key IN (SELECT l.key FROM login_throttle l WHERE l.expires_at <= @now LIMIT 1000);

-- name: RememberLoginNetwork :exec
-- RememberLoginNetwork marks a key (an account and a client network it signed in from) known
-- until expires_at, or later if it already was; the row counts no attempts.
INSERT INTO login_throttle AS t (key, attempts, expires_at)
VALUES (@key, 0, @expires_at)
ON CONFLICT (key) DO UPDATE SET expires_at = greatest(t.expires_at, EXCLUDED.expires_at);

-- name: LoginNetworkKnown :one
-- LoginNetworkKnown reports whether a key marked by RememberLoginNetwork is still known at now.
SELECT EXISTS (SELECT 1 FROM login_throttle WHERE key = @key AND expires_at > sqlc.arg(now)::timestamptz) AS known;
