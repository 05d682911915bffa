-- The reset of dev mode's demo data (POST /dev/reset; docs/specs.md: Swagger UI). Dev mode only:
-- nothing in prod calls these.

-- name: ResetOrdersData :exec
-- ResetOrdersData empties every table of the orders API and restarts its ids from 1, so the demo
-- data loads again under the ids the spec's examples name (all rows, no owner: dev mode's reset).
-- The TRUNCATE trigger of order_tokens (00100) empties every replica's token cache. CASCADE empties
-- with them the tables of other surfaces that reference these (a review of an order): the reset of
-- every surface runs anyway, and without it PostgreSQL refuses the TRUNCATE of a referenced table.
TRUNCATE order_tokens, order_cooldowns, order_ledger, order_counters, orders, order_users RESTART IDENTITY CASCADE;

-- name: SeedOrderCounters :exec
-- SeedOrderCounters puts back the new-orders list's counter row the migrations start with.
INSERT INTO order_counters (scope, owner_id, slot, n) VALUES ('waiting', 0, 0, 0);

-- name: ResetOrderPlatformSlots :exec
-- ResetOrderPlatformSlots empties the platform's commission account (all slots: dev mode's reset,
-- which removed the ledger rows that filled it).
UPDATE order_platform_slots SET balance = 0;

-- name: ResetBrandsData :exec
-- ResetBrandsData empties every table of the brands API (all rows, no owner: dev mode's reset);
-- the TRUNCATE trigger of brand_tokens (00100) empties every replica's token cache. CASCADE empties
-- with them the tables of other surfaces that reference these, as ResetOrdersData does.
TRUNCATE brand_tokens, brand_subscriptions, brand_subscriber_slots, brand_users, brands CASCADE;

-- name: DeleteAllIdempotencyKeys :exec
-- DeleteAllIdempotencyKeys forgets every remembered Idempotency-Key answer (all callers: dev mode's
-- reset, after which an old answer would name rows that are gone).
DELETE FROM idempotency_keys;

-- name: DeletePlatformInfo :exec
-- DeletePlatformInfo forgets one deployment fact (dev mode's reset: the marker of loaded demo data).
DELETE FROM platform_info WHERE key = $1;
