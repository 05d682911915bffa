-- The tables of Store (pgstate.Schema): used confirmation ids and pending messenger logins.
-- Expired rows are useless (the tokens they guard are refused by their exp), so they are swept,
-- never kept. This file is the source of triad's db/schema/00040_auth_state.sql, which holds the
-- same statements (TestSchema_IsTheServersMigration fails when they differ).
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
