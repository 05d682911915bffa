-- +goose Up
-- The auth library's shared state (impl/surfaces/auth/pgstate.Schema, which pgstate.New creates itself for
-- embedders): the server creates it here, with the rest of its schema, so that it starts as a role
-- that may only read and write rows, and on a database whose schema `server -mode migrate` made.
-- IF NOT EXISTS: servers before this migration created the tables at start.
CREATE TABLE IF NOT EXISTS auth_used_ids (
    id         text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_used_ids_expires_at ON auth_used_ids (expires_at);
CREATE TABLE IF NOT EXISTS auth_telegram_logins (
    token      text PRIMARY KEY,
    aud        text NOT NULL,
    session    boolean NOT NULL,
    expires_at timestamptz NOT NULL,
    usr        jsonb
);
CREATE INDEX IF NOT EXISTS auth_telegram_logins_expires_at ON auth_telegram_logins (expires_at);

-- +goose Down
DROP TABLE auth_telegram_logins;
DROP TABLE auth_used_ids;
