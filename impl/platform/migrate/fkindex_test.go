package migrate_test

import (
	"context"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// unindexedForeignKeys lists every foreign key of the schema whose columns do not lead an index of
// the referencing table: deleting (or re-keying) a referenced row then scans the whole referencing
// table to check it, which is what made removing 200 orders from a 1.2M-row ledger take a minute
// (issue 43). A partial index counts when its predicate only leaves out the rows whose key is NULL
// (those reference nothing), and an index of a partitioned table counts for its partitions.
const unindexedForeignKeys = `
SELECT c.conrelid::regclass::text || ' (' || string_agg(a.attname, ', ' ORDER BY k.ord) || ')'
FROM pg_constraint c
CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
JOIN pg_class r ON r.oid = c.conrelid
WHERE c.contype = 'f' AND c.conparentid = 0 AND r.relispartition = false
  AND NOT EXISTS (
    SELECT 1 FROM pg_index i
    WHERE i.indrelid = c.conrelid
      AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
      AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey
      AND (i.indpred IS NULL OR pg_get_expr(i.indpred, i.indrelid) ~ '^\(?[a-z_]+ IS NOT NULL\)?$'))
GROUP BY c.oid, c.conrelid
ORDER BY 1`

// TestSchema_EveryForeignKeyHasAnIndex: a database fresh from the migrations has no foreign key
// lacking an index (the list is empty; it names the table and columns of each one it finds).
func TestSchema_EveryForeignKeyHasAnIndex(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	rows, err := pool.Query(context.Background(), unindexedForeignKeys)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var missing []string
	for rows.Next() {
		var fk string
		if err := rows.Scan(&fk); err != nil {
			t.Fatal(err)
		}
		missing = append(missing, fk)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("%d foreign keys without an index (each delete of a referenced row scans the table):\n%v", len(missing), missing)
	}
}
