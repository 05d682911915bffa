-- +goose Up
-- A client address past its failed-login limit is no longer refused: its logins are checked one
-- slot at a time (throttle.Limiter.ReserveLogin), so a guesser is slowed to one check per slot
-- while a real user's right password behind the same address (an office, a proxy) still gets in.
-- next_slot is when the address's next check may start; NULL while it is under its limit.
ALTER TABLE login_throttle ADD COLUMN next_slot timestamptz;

-- +goose Down
ALTER TABLE login_throttle DROP COLUMN next_slot;
