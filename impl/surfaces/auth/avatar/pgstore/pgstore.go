// Package pgstore keeps avatars in a PostgreSQL table, so every server replica pointed at one
// database serves the same avatars (store URI postgres://...; the server's own database by default).
package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/avatardb"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
)

// pgTimeout bounds each store call on top of the caller's context: a stuck database must not hold
// a login or an avatar request forever, and a cancelled request releases its connection at once.
const pgTimeout = 10 * time.Second

// Store keeps avatars in the avatars table (migration 00030), so every server replica
// pointed at the same database serves the same avatars.
type Store struct {
	pool    *pgxpool.Pool
	q       *avatardb.Queries
	ownPool bool
	// reads picks the pool of Get and ID: a standby that has every write made before, or pool.
	reads *pgread.Reader
}

var _ avatar.Store = (*Store)(nil)

// New uses an existing pool (the server's own database, already migrated). Close does
// not close the pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, q: avatardb.New(pool), reads: pgread.New(pool, nil)}
}

// ReadFrom sends Get and ID through r (a standby with read-your-writes, so an avatar saved at a
// login is there for the page that shows it next); without it they read from the Store's pool.
func (s *Store) ReadFrom(r *pgread.Reader) { s.reads = r }

// Open connects to the database at uri and creates the avatars table there when it is
// missing, and nothing else: the database may be anyone's (in the server's own, migration 00030
// made the same table already). Close closes the connection pool.
func Open(ctx context.Context, uri string) (*Store, error) {
	pool, err := pgxpool.New(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("avatar: postgres store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := createTable(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("avatar: postgres store: %w", err)
	}
	s := New(pool)
	s.ownPool = true
	return s, nil
}

// avatarsTable is the avatars table of migration 00030 (db/schema/00030_avatars.sql), for a
// database triad's migrations do not manage. TestPostgresStore_OwnTableMatchesMigration keeps the two
// alike.
const avatarsTable = `CREATE TABLE IF NOT EXISTS avatars (
    id           text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{40}\.image$'),
    content      bytea NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 8388608),
    content_type text NOT NULL CHECK (content_type LIKE 'image/%'),
    etag         text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
)`

// tableLock serialises the creation by replicas starting together: CREATE TABLE IF NOT EXISTS is
// not safe against a concurrent creation of the same table.
const tableLock = int64(0x7472696164617661) // "triadava"

func createTable(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", tableLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, avatarsTable)
		return err
	})
}

func pgCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, pgTimeout)
}

// Put stores the image as userID's avatar.
func (s *Store) Put(ctx context.Context, userID string, r io.Reader) (string, error) {
	return avatar.PutImage(ctx, s, userID, r)
}

// PutID stores b under the avatar id with one upsert.
// It is the store's avatar.IDPutter, which Migrate uses.
func (s *Store) PutID(ctx context.Context, id string, b []byte) error {
	ctx, cancel := pgCtx(ctx)
	defer cancel()
	err := s.q.UpsertAvatar(ctx, avatardb.UpsertAvatarParams{
		ID: id, Content: b, ContentType: http.DetectContentType(b), Etag: avatar.ContentID(b),
	})
	if err != nil {
		return fmt.Errorf("avatar: postgres put: %w", err)
	}
	return nil
}

// Get reads the avatar's bytes.
func (s *Store) Get(ctx context.Context, avatarID string) (io.ReadCloser, int, error) {
	if !avatar.ValidID(avatarID) {
		return nil, 0, avatar.ErrNotFound
	}
	ctx, cancel := pgCtx(ctx)
	defer cancel()
	var b []byte
	err := s.reads.Do(ctx, func(p *pgxpool.Pool) (err error) {
		b, err = avatardb.New(p).GetAvatar(ctx, avatarID)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, avatar.ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("avatar: postgres get: %w", err)
	}
	return io.NopCloser(bytes.NewReader(b)), len(b), nil
}

// ID reads the content id saved with the avatar, without its bytes.
func (s *Store) ID(ctx context.Context, avatarID string) string {
	if !avatar.ValidID(avatarID) {
		return ""
	}
	ctx, cancel := pgCtx(ctx)
	defer cancel()
	var etag string
	err := s.reads.Do(ctx, func(p *pgxpool.Pool) (err error) {
		etag, err = avatardb.New(p).GetAvatarEtag(ctx, avatarID)
		return err
	})
	if err != nil {
		return ""
	}
	return etag
}

// Remove deletes the avatar.
func (s *Store) Remove(ctx context.Context, avatarID string) error {
	if !avatar.ValidID(avatarID) {
		return avatar.ErrNotFound
	}
	ctx, cancel := pgCtx(ctx)
	defer cancel()
	n, err := s.q.DeleteAvatar(ctx, avatarID)
	if err != nil {
		return fmt.Errorf("avatar: postgres remove: %w", err)
	}
	if n == 0 {
		return avatar.ErrNotFound
	}
	return nil
}

// List returns all avatar ids.
func (s *Store) List(ctx context.Context) ([]string, error) {
	ctx, cancel := pgCtx(ctx)
	defer cancel()
	ids, err := s.q.ListAvatarIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("avatar: postgres list: %w", err)
	}
	return ids, nil
}

// Close closes the pool if the store opened it.
func (s *Store) Close() error {
	if s.ownPool {
		s.pool.Close()
	}
	return nil
}
