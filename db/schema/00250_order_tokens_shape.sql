-- +goose Up
-- The orders token table takes the brands one's shape: the SHA-256 column is token_hash in both, so
-- the revocation trigger reads one column (it read hash or token_hash by table before).
ALTER TABLE order_tokens RENAME COLUMN hash TO token_hash;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notify_token_revoked() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify(TG_ARGV[0], '*');
        RETURN NULL;
    END IF;
    PERFORM pg_notify(TG_ARGV[0], encode(OLD.token_hash, 'hex'));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE order_tokens RENAME COLUMN token_hash TO hash;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notify_token_revoked() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    h bytea;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify(TG_ARGV[0], '*');
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'brand_tokens' THEN
        h := OLD.token_hash;
    ELSE
        h := OLD.hash;
    END IF;
    PERFORM pg_notify(TG_ARGV[0], encode(h, 'hex'));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
