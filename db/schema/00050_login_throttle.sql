-- +goose Up
-- Failed-login counting shared by every replica (impl/credentials/throttle). One row per login key (the SHA-256
-- of account and client network): attempts counts the password checks of the current window,
-- reserved before a check and given back when the check did not happen or succeeded; the window
-- ends at expires_at. Rows past expires_at count nothing and are deleted in passing.
CREATE TABLE login_throttle (
    key        bytea       PRIMARY KEY CHECK (length(key) = 32),
    attempts   integer     NOT NULL CHECK (attempts >= 0),
    expires_at timestamptz NOT NULL
);
CREATE INDEX login_throttle_expires_at_idx ON login_throttle (expires_at);

-- +goose Down
DROP TABLE login_throttle;
