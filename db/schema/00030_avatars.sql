-- +goose Up
-- Proxied avatar images, shared by every server replica. The id is "<sha1 of the user id>.image",
-- so it identifies the owner without revealing the user id; the checks keep anything but a
-- well-formed id and an image out of the table, whatever writes to it.
CREATE TABLE avatars (
    id           text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{40}\.image$'),
    content      bytea NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 8388608),
    content_type text NOT NULL CHECK (content_type LIKE 'image/%'),
    etag         text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE avatars;
