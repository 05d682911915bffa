package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/avatar"
	"github.com/triadhq/triad/impl/avatar/boltstore"
	"github.com/triadhq/triad/impl/avatar/filestore"
	"github.com/triadhq/triad/impl/avatar/mongostore"
	"github.com/triadhq/triad/impl/avatar/pgstore"
)

// openAvatarStore opens the avatar store AUTH_AVATAR_STORE names, by its scheme:
//
//   - "" : table avatars of the server's own database (pool), which every replica shares;
//   - "/path/to/dir" or "file:///path/to/dir": one file per avatar in a directory;
//   - "bolt:///path/to/file.db": a bbolt database file;
//   - "mongodb://host:port/?ava_db=db&ava_coll=coll" (or mongodb+srv://): a GridFS bucket;
//   - "postgres://..." or "postgresql://...": table avatars of that database (created there if missing).
//
// Any other scheme stops the start. Errors never repeat the URI, which may hold a password.
func openAvatarStore(ctx context.Context, uri string, pool *pgxpool.Pool) (avatar.Store, error) {
	if uri == "" {
		return pgstore.New(pool), nil
	}
	if !strings.Contains(uri, "://") {
		return filestore.New(uri)
	}
	u, err := avatar.ParseStoreURI(uri)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return filestore.New(u.Path)
	case "bolt":
		return boltstore.Open(u.Path)
	case "mongodb", "mongodb+srv":
		return mongostore.Open(ctx, uri)
	case "postgres", "postgresql":
		return pgstore.Open(ctx, uri)
	}
	return nil, fmt.Errorf("unsupported scheme %q (want a path, file, bolt, mongodb or postgres)", u.Scheme)
}
