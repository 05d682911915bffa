package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// orderBatch is how many orders one transaction of the removal deletes.
const orderBatch = 2000

// lockTries bounds the attempts at the detach's lock, each waiting at most lockWait: writers of
// the ledger queue behind a waiting detach, so it waits briefly and tries again rather than long.
const (
	lockTries = 120
	lockWait  = "2s"
)

// remove takes m out of the database once its files are written: the list of its finished orders
// kept in a work table (one scan of orders: finished orders never change), the opening rows and
// the detach in one short transaction (retried while writers hold the ledger), the detached
// partition dropped, then the orders of the list in batches. The counts must match the manifest's.
func remove(ctx context.Context, pool *pgxpool.Pool, m month, man Manifest) error {
	work := pgx.Identifier{"archive_orders_" + m.Partition}.Sanitize()
	if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+work); err != nil { // a run that died before its end
		return err
	}
	tag, err := pool.Exec(ctx, fmt.Sprintf(`CREATE UNLOGGED TABLE %s AS %s`, work,
		fmt.Sprintf(strings.Replace(finishedBefore, "SELECT *", "SELECT id", 1), quoteTime(m.To))))
	if err != nil {
		return fmt.Errorf("listing the month's finished orders: %w", err)
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ADD PRIMARY KEY (id)`, work)); err != nil {
		return fmt.Errorf("listing the month's finished orders: %w", err)
	}
	if want := man.Files[tableOrders].Rows; tag.RowsAffected() != want {
		return fmt.Errorf("%d finished orders, the archive holds %d", tag.RowsAffected(), want)
	}
	ledger := pgx.Identifier{m.Partition}.Sanitize()
	for try := 0; try < lockTries; try++ {
		err = detach(ctx, pool, m, ledger, man)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" { // lock_not_available
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, "DROP TABLE "+ledger); err != nil {
		return fmt.Errorf("dropping the detached partition: %w", err)
	}
	var removed int64
	for {
		n, err := removeOrders(ctx, pool, work)
		if err != nil {
			return fmt.Errorf("removing the month's finished orders: %w", err)
		}
		removed += n
		if n < orderBatch {
			break
		}
	}
	if want := man.Files[tableOrders].Rows; removed != want {
		return fmt.Errorf("removed %d finished orders, the archive holds %d", removed, want)
	}
	_, err = pool.Exec(ctx, "DROP TABLE "+work)
	return err
}

// detach leaves the opening rows of m at its end and detaches its partition, in one transaction.
func detach(ctx context.Context, pool *pgxpool.Pool, m month, ledger string, man Manifest) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+lockWait+"'"); err != nil {
			return err
		}
		var rows int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+ledger).Scan(&rows); err != nil {
			return err
		}
		if want := man.Files[tableLedger].Rows; rows != want {
			return fmt.Errorf("the partition holds %d rows, the archive %d", rows, want)
		}
		// The next month's partition receives the opening rows; pg_partman makes it when a gap
		// in the months lacks it.
		if _, err := tx.Exec(ctx, "SELECT partman.create_partition_time('public.order_ledger', ARRAY[$1::timestamptz])", m.To); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO order_ledger (user_id, kind, amount, created_at)
			SELECT user_id, 'opening', sum(amount), %s FROM %s GROUP BY user_id`, quoteTime(m.To), ledger))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != int64(len(man.Openings)) {
			return fmt.Errorf("%d opening rows, the archive lists %d", tag.RowsAffected(), len(man.Openings))
		}
		_, err = tx.Exec(ctx, "ALTER TABLE order_ledger DETACH PARTITION "+ledger)
		return err
	})
}

// removeOrders deletes up to orderBatch orders of the work list (with their cool-downs), takes them
// off their customers' and performers' list counts and off the list, in one transaction; it
// returns how many went.
func removeOrders(ctx context.Context, pool *pgxpool.Pool, work string) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, fmt.Sprintf(`
			WITH batch AS (
				DELETE FROM %[1]s w WHERE w.id IN (SELECT id FROM %[1]s ORDER BY id LIMIT $1) RETURNING w.id
			), cool AS (
				DELETE FROM order_cooldowns c USING batch WHERE c.order_id = batch.id
			), gone AS (
				DELETE FROM orders o USING batch WHERE o.id = batch.id RETURNING o.customer_id, o.performer_id
			), counted AS (
				INSERT INTO order_counters (scope, owner_id, slot, n)
				SELECT s.scope, s.owner_id, order_counter_slot(), -count(*) FROM gone,
				LATERAL (VALUES ('customer', gone.customer_id), ('performer', gone.performer_id)) AS s(scope, owner_id)
				WHERE s.owner_id IS NOT NULL GROUP BY s.scope, s.owner_id
				ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n
			)
			SELECT count(*) FROM gone`, work), orderBatch).Scan(&n)
	})
	return n, err
}
