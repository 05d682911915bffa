-- name: UpsertAvatar :exec
-- UpsertAvatar stores or replaces the avatar with the given id.
INSERT INTO avatars (id, content, content_type, etag)
VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE
SET content = excluded.content, content_type = excluded.content_type, etag = excluded.etag, updated_at = now();

-- name: GetAvatar :one
-- GetAvatar returns the bytes of one avatar.
SELECT content FROM avatars WHERE id = $1;

-- name: GetAvatarEtag :one
-- GetAvatarEtag returns the content id of one avatar without reading its bytes.
SELECT etag FROM avatars WHERE id = $1;

-- name: DeleteAvatar :execrows
-- DeleteAvatar removes one avatar and reports whether it existed.
DELETE FROM avatars WHERE id = $1;

-- name: ListAvatarIDs :many
-- ListAvatarIDs returns the ids of all avatars (a store-wide listing, used by migration).
SELECT id FROM avatars ORDER BY id;
