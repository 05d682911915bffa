package main

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/platform"
	"github.com/triadhq/triad/impl/surfaces/orders/archive"
)

// runArchive is `-mode archive` over the direct URL (DATABASE_DIRECT_URL, else primary): the
// orders' retention, or with ARCHIVE_RESTORE the return of one archived month.
func runArchive(ctx context.Context, a ArchiveConfig, po platform.Options, primary string) error {
	url := primary
	if po.DirectURL != "" {
		url = po.DirectURL
	}
	conn, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	return archive.Run(ctx, conn, archive.Options{Dir: a.Dir, Horizon: a.Horizon, Log: po.Log}, a.Restore)
}
