-- name: ClaimSweepLease :one
-- ClaimSweepLease takes or renews the lease of a sweep for holder until now + ttl when it is free,
-- has run out or is holder's already (compare-and-swap in one statement); no row: another holds it.
INSERT INTO sweep_leases (name, holder, until) VALUES (@name, @holder, now() + @ttl::interval)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
WHERE sweep_leases.until < now() OR sweep_leases.holder = excluded.holder
RETURNING until;

-- name: MaintainOrderLedger :one
-- MaintainOrderLedger has pg_partman make the ledger's partitions ahead of need and returns how
-- many future months have one.
SELECT order_ledger_maintain()::bigint AS ahead;
