-- +goose Up
-- Access tokens of the brands API expire (BRANDS_TOKEN_TTL). Tokens issued before this migration
-- keep working until they are logged out, as they did when they were issued.
ALTER TABLE brand_tokens ADD COLUMN expires_at timestamptz NOT NULL DEFAULT 'infinity';
CREATE INDEX brand_tokens_expires_at_idx ON brand_tokens (expires_at);

-- +goose Down
DROP INDEX brand_tokens_expires_at_idx;
ALTER TABLE brand_tokens DROP COLUMN expires_at;
