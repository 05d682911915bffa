-- name: GetPlatformInfo :one
-- GetPlatformInfo reads one deployment fact by key.
SELECT key, value, updated_at FROM platform_info WHERE key = $1;

-- name: PutPlatformInfo :exec
-- PutPlatformInfo records a deployment fact, replacing an older value.
INSERT INTO platform_info (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();
