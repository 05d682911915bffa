package archive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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

// workPrefix starts the name of a month's work table, the list of its finished orders still to
// remove: archive_orders_order_ledger_pYYYY_MM. It outlives a run cut short (resume).
const workPrefix = "archive_orders_"

// remove takes m out of the database once its files are written: the list of its finished orders
// kept in a work table (one scan of orders: finished orders never change), the opening rows and
// the detach in one short transaction (retried while writers hold the ledger), the detached
// partition dropped, then the orders of the list in batches. The counts must match the manifest's.
// Once the detach has committed, the work table is what a run cut short leaves to resume.
func remove(ctx context.Context, pool *pgxpool.Pool, m month, man Manifest, o Options) error {
	work := pgx.Identifier{workPrefix + m.Partition}.Sanitize()
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
	removed, err := removeListed(ctx, pool, m.Partition, work, o)
	if err != nil {
		return err
	}
	if want := man.Files[tableOrders].Rows; removed != want {
		return fmt.Errorf("removed %d finished orders, the archive holds %d", removed, want)
	}
	_, err = pool.Exec(ctx, "DROP TABLE "+work)
	return err
}

// removeListed deletes the orders of the work list in batches until none is left, and returns how
// many went.
func removeListed(ctx context.Context, pool *pgxpool.Pool, partition, work string, o Options) (int64, error) {
	var removed int64
	for {
		n, err := removeOrders(ctx, pool, work, o.batch)
		if err != nil {
			return removed, fmt.Errorf("removing the month's finished orders: %w", err)
		}
		removed += n
		if o.afterBatch != nil && n > 0 {
			o.afterBatch(partition)
		}
		if n < int64(o.batch) {
			return removed, nil
		}
	}
}

// resume finishes what a run cut short left: for each work table (a month whose removal began),
// when the month's partition is still attached the detach never committed and nothing was
// removed, so the work table is dropped and the month is archived afresh (monthsBefore still
// lists it); otherwise the partition is dropped if the run died before that, and the orders still
// listed are removed, so that the next month's files cannot take them a second time. It returns
// the manifests of the months it finished, read from their folders under o.Dir.
func resume(ctx context.Context, pool *pgxpool.Pool, o Options) ([]Manifest, error) {
	rows, err := pool.Query(ctx, `
		SELECT substr(c.relname, length($1) + 1), to_regclass(quote_ident(substr(c.relname, length($1) + 1))) IS NOT NULL,
		       EXISTS (SELECT FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhrelid
		               WHERE h.inhparent = 'order_ledger'::regclass AND p.relname = substr(c.relname, length($1) + 1))
		FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace AND starts_with(c.relname, $1)
		ORDER BY c.relname`, workPrefix)
	if err != nil {
		return nil, fmt.Errorf("archive: looking for a run cut short: %w", err)
	}
	type pending struct {
		Partition        string
		Exists, Attached bool
	}
	left, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pending])
	if err != nil {
		return nil, fmt.Errorf("archive: looking for a run cut short: %w", err)
	}
	var done []Manifest
	for _, p := range left {
		work := pgx.Identifier{workPrefix + p.Partition}.Sanitize()
		if p.Attached {
			if _, err := pool.Exec(ctx, "DROP TABLE "+work); err != nil {
				return done, fmt.Errorf("archive: %s: %w", p.Partition, err)
			}
			continue
		}
		man, err := readManifest(filepath.Join(o.Dir, p.Partition))
		if err != nil {
			return done, fmt.Errorf("archive: %s was cut short after its detach: %w", p.Partition, err)
		}
		if p.Exists { // detached, not yet dropped
			if _, err := pool.Exec(ctx, "DROP TABLE "+pgx.Identifier{p.Partition}.Sanitize()); err != nil {
				return done, fmt.Errorf("archive: %s: dropping the detached partition: %w", p.Partition, err)
			}
		}
		n, err := removeListed(ctx, pool, p.Partition, work, o)
		if err != nil {
			return done, fmt.Errorf("archive: %s: %w", p.Partition, err)
		}
		if _, err := pool.Exec(ctx, "DROP TABLE "+work); err != nil {
			return done, fmt.Errorf("archive: %s: %w", p.Partition, err)
		}
		o.Log.Info("finished a month of the orders ledger an earlier archive run left", "partition", p.Partition, "orders", n)
		done = append(done, man)
	}
	return done, nil
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

// removeOrders deletes up to batch orders of the work list (with their cool-downs), takes them
// off their customers' and performers' list counts and off the list, in one transaction; it
// returns how many went.
func removeOrders(ctx context.Context, pool *pgxpool.Pool, work string, batch int) (int64, error) {
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
			SELECT count(*) FROM gone`, work), batch).Scan(&n)
	})
	return n, err
}
