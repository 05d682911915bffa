// Package archive is the orders' retention (`server -mode archive`): whole months of the ledger
// older than a horizon leave the database for files an operator keeps in cold storage, with the
// finished orders of those months, and come back from them (Restore).
//
// A month goes as one partition of order_ledger (migration 00340). Its rows and the orders that
// finished before its end (COMPLETED or CANCELLED, with their cool-downs) are copied out (COPY, in
// one snapshot) to a folder of files, each checksummed (SHA-256) in a manifest. Then one
// transaction leaves an opening row per account in the next month (kind 'opening', dated at the
// month's end: the sum of the account's rows in the month, so every balance still equals the sum
// of its ledger rows), removes the orders and their list counts, and detaches the partition, which
// is then dropped: O(1) for the ledger, whatever its size (rows are never deleted one by one from
// the ledger); the month's finished orders then go in batches of their own, each a short
// transaction.
//
// An archive cut short (killed, its context cancelled) is resumed by the next run before anything
// else (resume): a month whose partition was detached has its listed orders removed, so no order
// is left behind to be taken again by the next month's files, and a month whose partition is still
// attached is archived afresh. Each order therefore lands in exactly one month's files.
package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultHorizon is how old a month's end must be before the month is archived, unless
// configured otherwise: a year.
const DefaultHorizon = 365 * 24 * time.Hour

// ManifestName is the name of an archive's manifest in its folder.
const ManifestName = "manifest.json"

// Manifest describes one archived month: what was taken, where it is, and how to prove it.
type Manifest struct {
	// Partition is the ledger partition the month was (order_ledger_pYYYY_MM); From and To bound
	// its rows' created_at (To excluded).
	Partition string    `json:"partition"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	// Files are the COPY text files of the folder, by table.
	Files map[string]File `json:"files"`
	// Sums are the month's ledger amounts by kind.
	Sums map[string]int64 `json:"sums"`
	// Openings are the opening rows the archive left at To: the sum of each account's rows in the
	// month (a nil user is the platform's commission account).
	Openings   []Opening `json:"openings"`
	ArchivedAt time.Time `json:"archivedAt"`
}

// File is one table's rows in an archive.
type File struct {
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	SHA256 string `json:"sha256"`
}

// Opening is an opening row an archive left in the ledger.
type Opening struct {
	UserID *int64 `json:"userId"`
	Amount int64  `json:"amount"`
}

// The tables an archive holds, in the order they are written and put back.
const (
	tableOrders    = "orders"
	tableCooldowns = "order_cooldowns"
	tableLedger    = "order_ledger"
)

// Options configure Archive.
type Options struct {
	// Dir is where each month's folder is written.
	Dir string
	// Horizon: a month whose end is older than this (before Now) is archived. 0 is DefaultHorizon.
	Horizon time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Log hears each month archived; nil discards.
	Log *slog.Logger

	// batch is how many orders one transaction of the removal deletes (0: orderBatch); afterBatch,
	// when set, is called after each committed batch with the month's partition (tests cut a run
	// short there).
	batch      int
	afterBatch func(partition string)
}

// Archive archives every month of the ledger that ended before Now - Horizon, oldest first, and
// returns their manifests. A month it fails on stops the run; the months before it are done. A
// month an earlier run left unfinished is finished first (its manifest leads the list when its
// partition was already detached; else it is archived afresh with the others).
func Archive(ctx context.Context, pool *pgxpool.Pool, o Options) ([]Manifest, error) {
	if o.Dir == "" {
		return nil, errors.New("archive: no folder to write to")
	}
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.batch <= 0 {
		o.batch = orderBatch
	}
	done, err := resume(ctx, pool, o)
	if err != nil {
		return done, err
	}
	months, err := monthsBefore(ctx, pool, o.Now().Add(-o.Horizon))
	if err != nil {
		return done, err
	}
	for _, m := range months {
		start := time.Now()
		man, err := archiveMonth(ctx, pool, m, filepath.Join(o.Dir, m.Partition), o)
		if err != nil {
			return done, fmt.Errorf("archive: %s: %w", m.Partition, err)
		}
		o.Log.Info("archived a month of the orders ledger", "partition", m.Partition, "ledger_rows", man.Files[tableLedger].Rows,
			"orders", man.Files[tableOrders].Rows, "openings", len(man.Openings), "took", time.Since(start).Round(time.Millisecond),
			"folder", filepath.Join(o.Dir, m.Partition))
		done = append(done, man)
	}
	return done, nil
}

// The statements here name a partition, or a COPY's query (which takes no parameters), so they
// are built in Go rather than in db/queries; what goes into them is the partitions' own names and
// bounds, read from the catalog, never input.

// month is one partition of the ledger.
type month struct {
	Partition string
	From, To  time.Time
}

// monthsBefore lists the ledger's partitions (the default one aside) that end at or before cut,
// oldest first.
func monthsBefore(ctx context.Context, pool *pgxpool.Pool, cut time.Time) ([]month, error) {
	rows, err := pool.Query(ctx, `
		SELECT c.relname, i.child_start_time, i.child_end_time
		FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
		CROSS JOIN LATERAL partman.show_partition_info('public.' || c.relname, p_parent_table := 'public.order_ledger') AS i
		WHERE h.inhparent = 'order_ledger'::regclass AND NOT c.relpartbound IS NULL
		  AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT' AND i.child_end_time <= $1
		ORDER BY i.child_start_time`, cut)
	if err != nil {
		return nil, fmt.Errorf("archive: listing the ledger's partitions: %w", err)
	}
	ms, err := pgx.CollectRows(rows, pgx.RowToStructByPos[month])
	if err != nil {
		return nil, fmt.Errorf("archive: listing the ledger's partitions: %w", err)
	}
	return ms, nil
}

// finishedBefore selects the orders an archive of a month ending at $1 takes: finished before it.
const finishedBefore = `SELECT * FROM orders WHERE status IN ('COMPLETED', 'CANCELLED') AND updated_at < %s ORDER BY id`

// archiveMonth writes m's files to dir, then removes m from the database. Files an earlier run
// left in dir are replaced: m's partition is still attached, so that run removed nothing (the
// detach is the first removal) and the database still holds all they hold.
func archiveMonth(ctx context.Context, pool *pgxpool.Pool, m month, dir string, o Options) (Manifest, error) {
	man := Manifest{Partition: m.Partition, From: m.From, To: m.To, Files: map[string]File{}, Sums: map[string]int64{}}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return man, err
	}
	for _, name := range []string{ManifestName, tableOrders + ".copy", tableCooldowns + ".copy", tableLedger + ".copy"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return man, err
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return man, err
	}
	defer conn.Release()
	// One snapshot for every file: the month is in the past, so nothing writes its rows or
	// changes a finished order any more, and what is copied is what the removal below removes
	// (it checks the counts).
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return man, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	to := quoteTime(m.To)
	ledger := pgx.Identifier{m.Partition}.Sanitize()
	for _, f := range []struct{ table, query string }{
		{tableOrders, fmt.Sprintf(finishedBefore, to)},
		{tableCooldowns, fmt.Sprintf(`SELECT * FROM order_cooldowns WHERE order_id IN (SELECT id FROM (%s) o) ORDER BY order_id, performer_id`, fmt.Sprintf(finishedBefore, to))},
		{tableLedger, fmt.Sprintf(`SELECT * FROM %s ORDER BY id`, ledger)},
	} {
		file, err := copyOut(ctx, tx.Conn(), f.query, filepath.Join(dir, f.table+".copy"))
		if err != nil {
			return man, fmt.Errorf("copying %s out: %w", f.table, err)
		}
		man.Files[f.table] = file
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT kind, sum(amount)::bigint FROM %s GROUP BY kind`, ledger))
	if err != nil {
		return man, err
	}
	for rows.Next() {
		var kind string
		var sum int64
		if err := rows.Scan(&kind, &sum); err != nil {
			return man, err
		}
		man.Sums[kind] = sum
	}
	if err := rows.Err(); err != nil {
		return man, err
	}
	rows, err = tx.Query(ctx, fmt.Sprintf(`SELECT user_id, sum(amount)::bigint FROM %s GROUP BY user_id ORDER BY user_id NULLS FIRST`, ledger))
	if err != nil {
		return man, err
	}
	man.Openings, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Opening])
	if err != nil {
		return man, err
	}
	if err := tx.Rollback(ctx); err != nil {
		return man, err
	}
	man.ArchivedAt = time.Now().UTC()
	if err := writeManifest(dir, man); err != nil {
		return man, err
	}
	return man, remove(ctx, pool, m, man, o)
}

// copyOut writes query's rows (COPY text format) to path, synced, and returns its file entry.
func copyOut(ctx context.Context, conn *pgx.Conn, query, path string) (File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	tag, err := conn.PgConn().CopyTo(ctx, io.MultiWriter(f, h), "COPY ("+query+") TO STDOUT")
	if err != nil {
		return File{}, err
	}
	if err := f.Sync(); err != nil {
		return File{}, err
	}
	return File{Name: filepath.Base(path), Rows: tag.RowsAffected(), SHA256: hex.EncodeToString(h.Sum(nil))}, f.Close()
}

// writeManifest writes man to dir's manifest, synced, before anything is removed.
func writeManifest(dir string, man Manifest) error {
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, ManifestName), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// quoteTime is t as a timestamptz literal.
func quoteTime(t time.Time) string { return "'" + t.UTC().Format(time.RFC3339Nano) + "'::timestamptz" }
