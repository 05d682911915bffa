-- +goose Up
-- Idempotency-Key on the POSTs that create something (impl/kit/idempotency): the first answer to a key,
-- replayed to a repeat of the same request by the same caller, on any replica. scope is the SHA-256
-- of the operation and the caller's credentials, request that of the whole request (method, path,
-- query, content type, body); answer is the first answer (status, headers, body), sealed with a key
-- derived from the request itself, so a copy of the table replays nothing to whoever lacks the
-- request (a registration's body holds its password). NULL answer: the first request is still
-- running, until running_until; a key whose first request died unanswered may then be run again.
CREATE TABLE idempotency_keys (
    scope         bytea       NOT NULL CHECK (length(scope) = 32),
    key           text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request       bytea       NOT NULL CHECK (length(request) = 32),
    answer        bytea,
    running_until timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
