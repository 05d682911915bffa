// Package avatarstore opens an avatar store from a URI, the seed's way of choosing one
// (auth-service.md, avatar proxy item 5; go-pkgz/auth's avatar.NewStore): a file-system path or a
// file:// URI, an embedded key-value file (bolt://), a document database (mongodb:// with ava_db and
// ava_coll), or a PostgreSQL database (postgres://). The stores themselves are the packages beside
// it; a site that always uses one kind may call that package directly.
package avatarstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/boltstore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/mongostore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/pgstore"
)

// Options say what Open needs besides the URI.
type Options struct {
	// Pool is the site's own PostgreSQL database (migrated, with table avatars), where an empty URI
	// keeps avatars; Close leaves it open. Without it an empty URI is an error.
	Pool *pgxpool.Pool
	// Reads, when set, sends the reads of Pool's avatars to a standby with read-your-writes
	// (pgread); nil reads them from Pool.
	Reads *pgread.Reader
}

// ErrNoURI is an empty URI without Options.Pool.
var ErrNoURI = errors.New("avatar: no store URI")

// Open opens the store uri names, by its scheme:
//
//   - "/path/to/dir", "./avatars" or "file:///path/to/dir": one file per avatar in a directory (filestore);
//   - "bolt:///path/to/file.db": a bbolt key-value file (boltstore);
//   - "mongodb://host:port/?ava_db=db&ava_coll=coll" (or mongodb+srv://): a GridFS bucket (mongostore);
//   - "postgres://..." or "postgresql://...": table avatars of that database, created there if
//     missing (pgstore);
//   - "": table avatars of opts.Pool, which every replica of a site shares.
//
// Any other scheme is an error. Errors never repeat the URI, which may hold a password. The caller
// closes the store.
func Open(ctx context.Context, uri string, opts Options) (avatar.Store, error) {
	if uri == "" {
		if opts.Pool == nil {
			return nil, ErrNoURI
		}
		s := pgstore.New(opts.Pool)
		if opts.Reads != nil {
			s.ReadFrom(opts.Reads)
		}
		return s, nil
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
	return nil, fmt.Errorf("avatar: unsupported store scheme %q (want a path, file, bolt, mongodb or postgres)", u.Scheme)
}
