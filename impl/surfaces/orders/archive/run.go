package archive

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/migrate"
)

// Run is `server -mode archive` over conn (the direct URL): Archive with o, or, when restore names
// a folder, Restore of it. The database must have every migration of this binary first (server
// -mode migrate).
func Run(ctx context.Context, conn *pgx.ConnConfig, o Options, restore string) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	n, err := migrate.Pending(ctx, conn)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("archive: the database lacks %d migrations of this binary: run server -mode migrate first", n)
	}
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return err
	}
	cfg.ConnConfig = conn.Copy()
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer pool.Close()
	if restore != "" {
		man, err := Restore(ctx, pool, restore)
		if err != nil {
			return err
		}
		o.Log.Info("archive: put a month of the orders ledger back", "partition", man.Partition, "ledger_rows", man.Files[tableLedger].Rows,
			"orders", man.Files[tableOrders].Rows, "folder", restore)
		return nil
	}
	mans, err := Archive(ctx, pool, o)
	if err != nil {
		return err
	}
	o.Log.Info("archive: done", "months", len(mans), "horizon", o.Horizon, "folder", o.Dir)
	return nil
}
