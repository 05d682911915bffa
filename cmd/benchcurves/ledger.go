package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"
)

// The ledger curve (issue 43): a year of completed orders, three ledger rows each (payment,
// earning, commission), grown to each ledger size in turn (1M, 10M, 100M rows), and at each size
// the costs a user meets: POST /orders and PATCH /orders/{id}/accept throughput, a customer's page
// 0 and GET /orders/{id}. The rows are built server-side (INSERT ... SELECT generate_series) with
// the two tables' secondary indexes and foreign keys dropped and made again afterwards (row by row
// through the foreign keys is several times slower); the keys of orders come back NOT VALID (the
// rows are consistent by construction), the ledger's are checked again (PostgreSQL 15 takes no NOT
// VALID key on a partitioned table). The bulk users' balances are not the sums of their ledger rows: the
// curve measures costs, and only its fixture pairs (which pay for the accepts) need real balances.

// bulkUsers is how many customers (and as many performers) own the year of orders.
const bulkUsers = 1000

// ledgerRowsPerOrder is the ledger rows of one completed order.
const ledgerRowsPerOrder = 3

// ledgerCurve grows the ledger to each of sizes in turn and prints the costs at each.
func (b *bench) ledgerCurve(ctx context.Context, sizes []int) {
	if err := b.bulkUsers(ctx); err != nil {
		log.Fatal(err)
	}
	if err := b.yearOfPartitions(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nledger curve: a year of completed orders (%d ledger rows each) over %d customers\n", ledgerRowsPerOrder, bulkUsers)
	fmt.Printf("%-11s %-10s %-9s %10s %10s %11s %12s %9s %9s %s\n", "ledger", "orders", "build", "creates/s", "accepts/s",
		"own page 0", "GET order", "DB GiB", "RSS MiB", "load (1/5/15 min)")
	for _, n := range sizes {
		start := time.Now()
		orders, err := b.growLedger(ctx, n)
		if err != nil {
			log.Fatal(err)
		}
		built := time.Since(start)
		creates := b.creates(64)
		accepts, err := b.accepts(ctx, 64)
		if err != nil {
			log.Fatal(err)
		}
		own := b.pageTime(fmt.Sprintf("/users/%d/orders?page=0&size=20", b.bulkID), b.bulkTok)
		get, err := b.orderTime(ctx)
		if err != nil {
			log.Fatal(err)
		}
		var size float64
		if err := b.pool.QueryRow(ctx, "SELECT pg_database_size(current_database()) / 1073741824.0").Scan(&size); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-11d %-10d %-9s %10.0f %10.0f %11s %12s %9.1f %9s %s\n", n, orders, built.Round(time.Second), creates, accepts,
			ms(own), ms(get), size, b.rss(), loadavg())
	}
}

// bulkUsers inserts the customers and performers of the year of orders, with a token for the
// first customer (whose page and orders are timed).
func (b *bench) bulkUsers(ctx context.Context) error {
	err := b.pool.QueryRow(ctx, `
		WITH u AS (
			INSERT INTO order_users (username, password_hash, user_type, balance)
			SELECT 'bulk-' || k || g, 'x', CASE k WHEN 'c' THEN 'Customer' ELSE 'Performer' END, 0
			FROM generate_series(1, $1) AS g, (VALUES ('c'), ('p')) AS v(k)
			RETURNING id, username
		), t AS (
			INSERT INTO order_tokens (token_hash, user_id, expires_at)
			SELECT sha256(convert_to(rpad('bulk_c1', 43, 'A'), 'UTF8')), id, now() + interval '1 day' FROM u WHERE username = 'bulk-c1'
		)
		SELECT id FROM u WHERE username = 'bulk-c1'`, bulkUsers).Scan(&b.bulkID)
	b.bulkTok = token("bulk_c1")
	return err
}

// yearOfPartitions has pg_partman make the ledger's partitions of the last 13 months (the
// migration made them from the month it ran in).
func (b *bench) yearOfPartitions(ctx context.Context) error {
	_, err := b.pool.Exec(ctx, `SELECT partman.create_partition_time('public.order_ledger',
		ARRAY(SELECT date_trunc('month', now()) - make_interval(months => m) FROM generate_series(1, 13) AS m))`)
	return err
}

// growLedger adds completed orders and their ledger rows until the bulk ledger holds n rows and
// returns the orders the database then holds.
func (b *bench) growLedger(ctx context.Context, n int) (int64, error) {
	var have int64
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM orders o JOIN order_users u ON u.id = o.customer_id
		WHERE u.username LIKE 'bulk-c%'`).Scan(&have); err != nil {
		return 0, err
	}
	add := int64(n)/ledgerRowsPerOrder - have
	if add > 0 {
		restore, err := b.dropForBulk(ctx)
		if err != nil {
			return 0, err
		}
		for done := int64(0); done < add; done += 1_000_000 {
			if err := b.bulkChunk(ctx, have+done, min(1_000_000, add-done)); err != nil {
				return 0, err
			}
		}
		if err := restore(); err != nil {
			return 0, err
		}
	}
	if _, err := b.pool.Exec(ctx, "ANALYZE orders; ANALYZE order_ledger"); err != nil {
		return 0, err
	}
	var orders int64
	err := b.pool.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&orders)
	return orders, err
}

// bulkChunk inserts k completed orders numbered from, spread over the last 365 days (each
// completed an hour after its creation), their three ledger rows and their list counters.
func (b *bench) bulkChunk(ctx context.Context, from, k int64) error {
	_, err := b.pool.Exec(ctx, `
		WITH users AS (
			SELECT array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Customer') AS c,
			       array_agg(id ORDER BY id) FILTER (WHERE user_type = 'Performer') AS p
			FROM order_users WHERE username LIKE 'bulk-%'
		), o AS (
			INSERT INTO orders (customer_id, performer_id, description, price, held, status, created_at, updated_at)
			SELECT users.c[1 + g % $3], users.p[1 + (g * 7) % $3], 'Bulk order ' || g, 100 + (g * 7919) % 100000,
			       100 + (g * 7919) % 100000 + order_commission(100 + (g * 7919) % 100000), 'COMPLETED', t, t + interval '1 hour'
			FROM users, generate_series($1::bigint, $1::bigint + $2 - 1) AS g,
			     LATERAL (SELECT now() - interval '366 days' + make_interval(secs => (g * 104729) % 31536000)) AS ts(t)
			RETURNING id, customer_id, performer_id, price, held, updated_at
		), l AS (
			INSERT INTO order_ledger (user_id, order_id, kind, amount, created_at)
			SELECT r.user_id, o.id, r.kind, r.amount, o.updated_at FROM o,
			LATERAL (VALUES (o.customer_id, 'payment', -o.held), (o.performer_id, 'earning', o.price),
			                (NULL::bigint, 'commission', o.held - o.price)) AS r(user_id, kind, amount)
		)
		INSERT INTO order_counters (scope, owner_id, slot, n)
		SELECT s.scope, s.owner_id, 0, count(*) FROM o,
		LATERAL (VALUES ('customer', o.customer_id), ('performer', o.performer_id)) AS s(scope, owner_id)
		GROUP BY s.scope, s.owner_id
		ON CONFLICT (scope, owner_id, slot) DO UPDATE SET n = order_counters.n + excluded.n`, from, k, bulkUsers)
	return err
}

// dropForBulk drops the secondary indexes and foreign keys of orders and order_ledger, and
// returns what makes them again (the keys of orders NOT VALID).
func (b *bench) dropForBulk(ctx context.Context) (restore func() error, err error) {
	var indexes, keys []string // (name, definition) pairs
	rows, err := b.pool.Query(ctx, `
		SELECT 'i', i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i
		WHERE i.indrelid IN ('orders'::regclass, 'order_ledger'::regclass) AND NOT i.indisprimary
		UNION ALL
		SELECT 'k', c.conrelid::regclass::text || ' ' || c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
		WHERE c.conrelid IN ('orders'::regclass, 'order_ledger'::regclass) AND c.contype = 'f'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var kind, name, def string
		if err := rows.Scan(&kind, &name, &def); err != nil {
			return nil, err
		}
		if kind == "i" {
			indexes = append(indexes, name, def)
		} else {
			keys = append(keys, name, def)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := 0; i < len(indexes); i += 2 {
		if _, err := b.pool.Exec(ctx, "DROP INDEX "+indexes[i]); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(keys); i += 2 {
		table, name, _ := strings.Cut(keys[i], " ")
		if _, err := b.pool.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", table, name)); err != nil {
			return nil, err
		}
	}
	return func() error {
		for i := 0; i < len(indexes); i += 2 {
			// pg_get_indexdef names a partitioned table's index ON ONLY the parent, which makes it
			// on no partition: without ONLY it is made on every one.
			if _, err := b.pool.Exec(ctx, strings.Replace(indexes[i+1], " ON ONLY ", " ON ", 1)); err != nil {
				return err
			}
		}
		for i := 0; i < len(keys); i += 2 {
			table, name, _ := strings.Cut(keys[i], " ")
			valid := ""
			if table == "orders" {
				valid = " NOT VALID"
			}
			if _, err := b.pool.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s%s", table, name, keys[i+1], valid)); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// orderTime is the median time of GET /orders/{id} over 100 reads of up to 110 of the bulk
// customer's orders (each read once when it has that many), after 10 untimed reads.
func (b *bench) orderTime(ctx context.Context) (time.Duration, error) {
	rows, err := b.pool.Query(ctx, `SELECT id FROM orders WHERE customer_id = $1 ORDER BY (id * 2654435761) % 1000003 LIMIT 110`, b.bulkID)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("the bulk customer has no orders")
	}
	var times []time.Duration
	for i := range 110 {
		id := ids[i%len(ids)]
		s := time.Now()
		if !b.get(fmt.Sprintf("/orders/%d", id), b.bulkTok) {
			return 0, fmt.Errorf("GET /orders/%d failed", id)
		}
		if i >= 10 {
			times = append(times, time.Since(s))
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// loadavg is the machine's load averages, as /proc/loadavg gives them.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
