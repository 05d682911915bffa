-- +goose Up
-- The auth library's Telegram poller offsets (impl/surfaces/auth/pgstate.OffsetsSchema, which
-- pgstate.New creates itself for embedders): the poller of a bot records here how far it has
-- handled the bot's updates, and the next poller elected, on any replica, starts there.
CREATE TABLE IF NOT EXISTS auth_telegram_offsets (
    bot         text PRIMARY KEY,
    next_update bigint NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE auth_telegram_offsets;
