-- +goose Up
-- The sweeps of expired rows and the ledger's partition maintenance run on one replica at a time
-- (issue 43): each sweep is a lease here, taken by compare-and-swap (ClaimSweepLease: free, run
-- out, or already the caller's) before the sweep and again before each of its batches, so a
-- replica that stalled past its lease finds it taken and stops instead of acting as the leader.
CREATE TABLE sweep_leases (
    name   text        PRIMARY KEY,
    holder text        NOT NULL,
    until  timestamptz NOT NULL
);

-- order_ledger_maintain has pg_partman make the ledger's partitions ahead of need (4 months, the
-- premake of 00340), run hourly by the sweep leader. It runs as the schema's owner (SECURITY
-- DEFINER): creating partitions needs the table's owner, and the servers may run as a role that
-- only reads and writes rows (DB_APP_ROLE). It returns how many partitions ahead the ledger now has.
-- +goose StatementBegin
CREATE FUNCTION order_ledger_maintain() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM partman.run_maintenance('public.order_ledger', p_jobmon := false);
    RETURN (SELECT count(*) FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
            CROSS JOIN LATERAL partman.show_partition_info('public.' || c.relname, p_parent_table := 'public.order_ledger') AS i
            WHERE h.inhparent = 'public.order_ledger'::regclass AND c.relname <> 'order_ledger_default' AND i.child_start_time > now());
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION order_ledger_maintain();
DROP TABLE sweep_leases;
