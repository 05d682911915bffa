-- The table of the Telegram pollers' offsets (pgstate.OffsetsSchema): per bot (its user id), the
-- getUpdates offset its last poller reached (the id of the last handled update + 1) and when, so
-- the next poller elected, on any replica, starts after the updates already answered. triad's
-- db/schema/00360_auth_telegram_offsets.sql holds the same statements: this file is their source
-- (TestSchema_IsTheServersMigration fails when they differ).
CREATE TABLE IF NOT EXISTS auth_telegram_offsets (
    bot         text PRIMARY KEY,
    next_update bigint NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);
