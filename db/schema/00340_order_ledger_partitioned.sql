-- +goose NO TRANSACTION
-- +goose Up
-- order_ledger becomes a table partitioned by month of created_at (issue 43), its partitions made
-- and kept ahead of need by pg_partman (Debian's postgresql-15-partman; managed services offer it
-- too), so a month of the ledger is archived by detaching and dropping one partition (server -mode
-- archive) instead of deleting rows. docs/scaling.md says why orders is not partitioned.
--
-- A live database is converted while servers keep writing, in three steps, each its own
-- transaction (NO TRANSACTION above: goose runs each statement on its own):
-- 1. One short transaction swaps the tables: the ledger is renamed order_ledger_old and an empty
--    partitioned order_ledger takes its name, with partitions from the month of the oldest row to
--    4 months ahead. The ledger's writers (order_accept and the moves in db/queries/orders.sql)
--    name the table, so from that commit on they write into the new one; they only ever insert.
-- 2. order_ledger_move moves the old rows over in batches, each batch one transaction deleting
--    rows from the old table and inserting them into the new one, so a balance always equals the
--    sum of its rows over both tables, and no lock is held for long.
-- 3. The emptied old table is dropped, its locks taken in the writers' order as in step 1.
-- Interrupted, the migration is run again from the start: each step finds what the last run did.
-- 'opening' is the kind of the rows an archive leaves in place of a month it took away: one per
-- account, its balance at the end of that month (impl/surfaces/orders/archive).
CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

-- +goose StatementBegin
DO $$
DECLARE
    start_month timestamptz;
    next_id bigint;
BEGIN
    IF EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = 'order_ledger'::regclass) THEN
        RETURN;
    END IF;
    -- The swap waits for the writers in flight and holds up the next ones while it waits: a
    -- writer that keeps its transaction open makes it give up (lock_timeout) and try again, so
    -- the queue behind it never lasts more than a second. It locks in the writers' order (the
    -- orders and their users, then the ledger: docs/orders.md#lock-order), since the new table's
    -- foreign keys lock orders and order_users too; the other way round, a writer holding a user
    -- row and waiting for the ledger and the swap holding the ledger and waiting for order_users
    -- wait on each other (a deadlock, which the 1M-row conversion test met).
    FOR attempt IN 1..600 LOOP
        BEGIN
            SET LOCAL lock_timeout = '1s';
            LOCK TABLE orders, order_users IN SHARE ROW EXCLUSIVE MODE;
            LOCK TABLE order_ledger IN ACCESS EXCLUSIVE MODE;
            EXIT;
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            IF attempt = 600 THEN
                RAISE;
            END IF;
            PERFORM pg_sleep(0.1);
        END;
    END LOOP;
    SET LOCAL lock_timeout = 0;
    ALTER TABLE order_ledger RENAME TO order_ledger_old;
    ALTER INDEX order_ledger_pkey RENAME TO order_ledger_old_pkey;
    ALTER INDEX order_ledger_user RENAME TO order_ledger_old_user;
    ALTER INDEX order_ledger_order RENAME TO order_ledger_old_order;
    CREATE TABLE order_ledger (
        id         bigint GENERATED ALWAYS AS IDENTITY,
        user_id    bigint CONSTRAINT order_ledger_user_id_fkey REFERENCES order_users (id),
        order_id   bigint CONSTRAINT order_ledger_order_id_fkey REFERENCES orders (id),
        kind       text   NOT NULL CONSTRAINT order_ledger_kind_check
            CHECK (kind IN ('grant', 'payment', 'earning', 'commission', 'cancel', 'release', 'expire', 'reject', 'opening')),
        amount     bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        -- Commission rows are the platform's; an opening row is a user's or (without one) the platform's.
        CONSTRAINT order_ledger_owner_check CHECK (kind = 'opening' OR (kind = 'commission') = (user_id IS NULL)),
        PRIMARY KEY (id, created_at)
    ) PARTITION BY RANGE (created_at);
    CREATE INDEX order_ledger_user ON order_ledger (user_id) WHERE user_id IS NOT NULL;
    CREATE INDEX order_ledger_order ON order_ledger (order_id) WHERE order_id IS NOT NULL;
    SELECT greatest(max(id), pg_sequence_last_value(pg_get_serial_sequence('order_ledger_old', 'id'))) + 1
    INTO next_id FROM order_ledger_old;
    EXECUTE format('ALTER TABLE order_ledger ALTER COLUMN id RESTART WITH %s', coalesce(next_id, 1));
    SELECT date_trunc('month', coalesce(min(created_at), now())) INTO start_month FROM order_ledger_old;
    PERFORM partman.create_parent('public.order_ledger', 'created_at', 'native', 'monthly',
        p_premake := 4, p_start_partition := to_char(start_month, 'YYYY-MM-DD HH24:MI:SSOF'), p_jobmon := false);
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE PROCEDURE order_ledger_move(batch integer)
LANGUAGE plpgsql AS $$
DECLARE
    lo bigint;
    hi bigint;
BEGIN
    IF to_regclass('order_ledger_old') IS NULL THEN
        RETURN;
    END IF;
    -- Nobody writes the old table any more (its name went with step 1), so its ids are fixed:
    -- batches by id range read only live rows (deleting from the front of an index and reading
    -- it again from there would walk every dead entry before them, each batch more).
    SELECT min(id), max(id) INTO lo, hi FROM order_ledger_old;
    WHILE lo <= hi LOOP
        WITH gone AS (
            DELETE FROM order_ledger_old o WHERE o.id >= lo AND o.id < lo + batch
            RETURNING o.id, o.user_id, o.order_id, o.kind, o.amount, o.created_at
        )
        INSERT INTO order_ledger (id, user_id, order_id, kind, amount, created_at) OVERRIDING SYSTEM VALUE
        SELECT id, user_id, order_id, kind, amount, created_at FROM gone;
        COMMIT;
        lo := lo + batch;
    END LOOP;
END
$$;
-- +goose StatementEnd
CALL order_ledger_move(5000);
DROP PROCEDURE order_ledger_move(integer);
-- +goose StatementBegin
DO $$
BEGIN
    IF to_regclass('order_ledger_old') IS NULL THEN
        RETURN;
    END IF;
    -- Dropping the old table drops its foreign keys' triggers on orders and order_users, which
    -- takes ACCESS EXCLUSIVE locks on both, in whatever order the drop meets them: taken the
    -- other way round from a writer's (orders, then its users), the drop and the writer wait on
    -- each other (a deadlock, which the conversion test met under load). So the locks are taken
    -- first, in the writers' order, giving up after a second and trying again like the swap; held
    -- only for the drop itself.
    FOR attempt IN 1..600 LOOP
        BEGIN
            SET LOCAL lock_timeout = '1s';
            LOCK TABLE orders, order_users IN ACCESS EXCLUSIVE MODE;
            LOCK TABLE order_ledger_old IN ACCESS EXCLUSIVE MODE;
            EXIT;
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            IF attempt = 600 THEN
                RAISE;
            END IF;
            PERFORM pg_sleep(0.1);
        END;
    END LOOP;
    SET LOCAL lock_timeout = 0;
    DROP TABLE order_ledger_old;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- Back to one plain table, the rows copied in one transaction (a rollback of a fresh schema, not
-- a path for a live database).
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE order_ledger RENAME TO order_ledger_parted;
    ALTER INDEX order_ledger_user RENAME TO order_ledger_parted_user;
    ALTER INDEX order_ledger_order RENAME TO order_ledger_parted_order;
    ALTER INDEX order_ledger_pkey RENAME TO order_ledger_parted_pkey;
    CREATE TABLE order_ledger (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id    bigint REFERENCES order_users (id),
        order_id   bigint REFERENCES orders (id),
        kind       text   NOT NULL CONSTRAINT order_ledger_kind_check
            CHECK (kind IN ('grant', 'payment', 'earning', 'commission', 'cancel', 'release', 'expire', 'reject')),
        amount     bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((kind = 'commission') = (user_id IS NULL))
    );
    INSERT INTO order_ledger (id, user_id, order_id, kind, amount, created_at) OVERRIDING SYSTEM VALUE
    SELECT id, user_id, order_id, kind, amount, created_at FROM order_ledger_parted;
    PERFORM setval(pg_get_serial_sequence('order_ledger', 'id'), coalesce(max(id), 0) + 1, false) FROM order_ledger;
    CREATE INDEX order_ledger_user ON order_ledger (user_id) WHERE user_id IS NOT NULL;
    CREATE INDEX order_ledger_order ON order_ledger (order_id) WHERE order_id IS NOT NULL;
    DELETE FROM partman.part_config WHERE parent_table = 'public.order_ledger';
    DROP TABLE order_ledger_parted;
END
$$;
-- +goose StatementEnd
DROP EXTENSION IF EXISTS pg_partman;
DROP SCHEMA IF EXISTS partman;
