package avatar

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

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/migrate"
)

func init() {
	open := func(uri string) (Store, error) { return OpenPostgresStore(context.Background(), uri) }
	openers["postgres"] = open
	openers["postgresql"] = open
}

// pgTimeout bounds each store call: the Store API has no context, and a stuck database must not
// hold a login or an avatar request forever.
const pgTimeout = 10 * time.Second

// PostgresStore keeps avatars in the avatars table (migration 00030), so every server replica
// pointed at the same database serves the same avatars.
type PostgresStore struct {
	pool    *pgxpool.Pool
	q       *db.Queries
	ownPool bool
}

var _ Store = (*PostgresStore)(nil)

// NewPostgresStore uses an existing pool (the server's own database, already migrated). Close does
// not close the pool.
func NewPostgresStore(pool *pgxpool.Pool) *PostgresStore {
	return &PostgresStore{pool: pool, q: db.New(pool)}
}

// OpenPostgresStore connects to the database at uri and applies triad's migrations there (a no-op
// when it is the server's own, already migrated database). Close closes the connection pool.
func OpenPostgresStore(ctx context.Context, uri string) (*PostgresStore, error) {
	pool, err := pgxpool.New(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("avatar: postgres store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := migrate.Up(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("avatar: postgres store: %w", err)
	}
	s := NewPostgresStore(pool)
	s.ownPool = true
	return s, nil
}

func pgCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), pgTimeout)
}

// Put stores the image as userID's avatar.
func (s *PostgresStore) Put(userID string, r io.Reader) (string, error) {
	b, err := readImageBytes(r)
	if err != nil {
		return "", err
	}
	id := AvatarID(userID)
	return id, s.putID(id, b)
}

func (s *PostgresStore) putID(id string, b []byte) error {
	ctx, cancel := pgCtx()
	defer cancel()
	err := s.q.UpsertAvatar(ctx, db.UpsertAvatarParams{
		ID: id, Content: b, ContentType: http.DetectContentType(b), Etag: contentID(b),
	})
	if err != nil {
		return fmt.Errorf("avatar: postgres put: %w", err)
	}
	return nil
}

// Get reads the avatar's bytes.
func (s *PostgresStore) Get(avatarID string) (io.ReadCloser, int, error) {
	if !ValidID(avatarID) {
		return nil, 0, ErrNotFound
	}
	ctx, cancel := pgCtx()
	defer cancel()
	b, err := s.q.GetAvatar(ctx, avatarID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("avatar: postgres get: %w", err)
	}
	return io.NopCloser(bytes.NewReader(b)), len(b), nil
}

// ID reads the content id saved with the avatar, without its bytes.
func (s *PostgresStore) ID(avatarID string) string {
	if !ValidID(avatarID) {
		return ""
	}
	ctx, cancel := pgCtx()
	defer cancel()
	etag, err := s.q.GetAvatarEtag(ctx, avatarID)
	if err != nil {
		return ""
	}
	return etag
}

// Remove deletes the avatar.
func (s *PostgresStore) Remove(avatarID string) error {
	if !ValidID(avatarID) {
		return ErrNotFound
	}
	ctx, cancel := pgCtx()
	defer cancel()
	n, err := s.q.DeleteAvatar(ctx, avatarID)
	if err != nil {
		return fmt.Errorf("avatar: postgres remove: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// List returns all avatar ids.
func (s *PostgresStore) List() ([]string, error) {
	ctx, cancel := pgCtx()
	defer cancel()
	ids, err := s.q.ListAvatarIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("avatar: postgres list: %w", err)
	}
	return ids, nil
}

// Close closes the pool if the store opened it.
func (s *PostgresStore) Close() error {
	if s.ownPool {
		s.pool.Close()
	}
	return nil
}
