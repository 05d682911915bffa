-- +goose Up
-- The auth library's revoked sessions (impl/surfaces/auth/pgstate.SessionsSchema, which pgstate.New creates
-- itself for embedders): a logout records its session here, and every replica refuses the
-- session's tokens from then on (pgstate.Sessions).
CREATE TABLE IF NOT EXISTS auth_revoked_sessions (
    hash       bytea PRIMARY KEY CHECK (length(hash) = 32),
    revoked_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_revoked_sessions_revoked_at ON auth_revoked_sessions (revoked_at);
CREATE INDEX IF NOT EXISTS auth_revoked_sessions_expires_at ON auth_revoked_sessions (expires_at);

-- +goose Down
DROP TABLE auth_revoked_sessions;
