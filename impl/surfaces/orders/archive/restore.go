package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Restore puts the archived month in dir back: its finished orders (and their cool-downs and list
// counts), and its ledger rows as the month's partition again, in place of the opening rows the
// archive left, in one transaction. Every file must match its checksum first. The opening rows
// must still be there as the archive left them: months are put back in the reverse order of their
// archiving (a later archive folds them into its own).
func Restore(ctx context.Context, pool *pgxpool.Pool, dir string) (Manifest, error) {
	man, err := readManifest(dir)
	if err != nil {
		return man, fmt.Errorf("restore: %w", err)
	}
	for _, table := range []string{tableOrders, tableCooldowns, tableLedger} {
		f, ok := man.Files[table]
		if !ok {
			return man, fmt.Errorf("restore: the manifest lists no %s file", table)
		}
		if err := verify(filepath.Join(dir, f.Name), f.SHA256); err != nil {
			return man, fmt.Errorf("restore: %w", err)
		}
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return putBack(ctx, tx, dir, man) })
	if err != nil {
		return man, fmt.Errorf("restore: %s: %w", man.Partition, err)
	}
	return man, nil
}

// readManifest reads the manifest of the archive in dir.
func readManifest(dir string) (Manifest, error) {
	var man Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return man, err
	}
	if err := json.Unmarshal(data, &man); err != nil {
		return man, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return man, nil
}

// verify checks the SHA-256 of the file at path.
func verify(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: SHA-256 %s, the manifest says %s: the file is not the one archived", filepath.Base(path), got, want)
	}
	return nil
}

// putBack is Restore's transaction.
func putBack(ctx context.Context, tx pgx.Tx, dir string, man Manifest) error {
	ledger := pgx.Identifier{man.Partition}.Sanitize()
	to := quoteTime(man.To)
	// The opening rows go first: they must be exactly the archive's.
	rows, err := tx.Query(ctx, fmt.Sprintf(`DELETE FROM order_ledger WHERE kind = 'opening' AND created_at = %s
		RETURNING user_id, amount`, to))
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Opening])
	if err != nil {
		return err
	}
	if !sameOpenings(got, man.Openings) {
		return fmt.Errorf("the ledger's opening rows at %s are not the %d this archive left (a later month archived since? put that one back first)",
			man.To.Format("2006-01-02"), len(man.Openings))
	}
	// The orders pass through a table of the transaction's own, so their list counts are theirs.
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE restored_orders (LIKE orders) ON COMMIT DROP`); err != nil {
		return err
	}
	if err := copyIn(ctx, tx, dir, man.Files[tableOrders], "restored_orders"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		WITH back AS (
			INSERT INTO orders OVERRIDING SYSTEM VALUE SELECT * FROM restored_orders RETURNING customer_id, performer_id
		)
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT s.scope, s.owner_id, order_counter_slot(), count(*)
		FROM back, LATERAL (VALUES ('customer', back.customer_id), ('performer', back.performer_id)) AS s(scope, owner_id)
		WHERE s.owner_id IS NOT NULL GROUP BY s.scope, s.owner_id
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`); err != nil {
		return err
	}
	if err := copyIn(ctx, tx, dir, man.Files[tableCooldowns], "order_cooldowns"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (LIKE order_ledger INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`, ledger)); err != nil {
		return err
	}
	if err := copyIn(ctx, tx, dir, man.Files[tableLedger], man.Partition); err != nil {
		return err
	}
	// Attaching checks the rows against the month's bounds and the foreign keys, and builds the
	// partition's indexes; it takes no lock that stops the ledger's writers.
	_, err = tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE order_ledger ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s)`,
		ledger, quoteTime(man.From), to))
	return err
}

// copyIn loads f (COPY text) into table and checks the row count.
func copyIn(ctx context.Context, tx pgx.Tx, dir string, f File, table string) error {
	r, err := os.Open(filepath.Join(dir, f.Name))
	if err != nil {
		return err
	}
	defer r.Close()
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, r, "COPY "+pgx.Identifier{table}.Sanitize()+" FROM STDIN")
	if err != nil {
		return fmt.Errorf("loading %s: %w", f.Name, err)
	}
	if tag.RowsAffected() != f.Rows {
		return fmt.Errorf("%s: %d rows loaded, the manifest says %d", f.Name, tag.RowsAffected(), f.Rows)
	}
	return nil
}

// sameOpenings reports whether a and b hold the same opening rows, in any order.
func sameOpenings(a, b []Opening) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(o Opening) string {
		if o.UserID == nil {
			return fmt.Sprintf("platform:%d", o.Amount)
		}
		return fmt.Sprintf("%d:%d", *o.UserID, o.Amount)
	}
	seen := map[string]int{}
	for _, o := range a {
		seen[key(o)]++
	}
	for _, o := range b {
		seen[key(o)]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}
