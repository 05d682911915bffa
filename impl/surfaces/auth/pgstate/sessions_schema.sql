-- The table of revoked sessions (pgstate.SessionsSchema): the SHA-256 of each session id (the
-- token's jti, which is also its XSRF value, so it is not kept in the clear), when it was revoked
-- and when it may be forgotten (the end of the session's cookie lifetime). triad's
-- db/schema/00210_auth_revoked_sessions.sql holds the same statements: this file is their source
-- (TestSchema_IsTheServersMigration fails when they differ).
CREATE TABLE IF NOT EXISTS auth_revoked_sessions (
    hash       bytea PRIMARY KEY CHECK (length(hash) = 32),
    revoked_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_revoked_sessions_revoked_at ON auth_revoked_sessions (revoked_at);
CREATE INDEX IF NOT EXISTS auth_revoked_sessions_expires_at ON auth_revoked_sessions (expires_at);
