-- name: SweepOrderCooldowns :execrows
-- SweepOrderCooldowns deletes up to batch cool-downs that have ended; rows a move holds are left
-- for the next sweep (SKIP LOCKED), so the sweep never waits for a write nor two replicas'
-- sweeps for each other.
DELETE FROM order_cooldowns c USING (
    SELECT order_id, performer_id FROM order_cooldowns WHERE until <= now()
    LIMIT @batch FOR UPDATE SKIP LOCKED
) AS gone
WHERE c.order_id = gone.order_id AND c.performer_id = gone.performer_id;
