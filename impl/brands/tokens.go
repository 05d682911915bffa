package brands

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/opaquetoken"
)

// tokenStore keeps the brands API's access tokens (their SHA-256) in PostgreSQL; it implements
// opaquetoken.Store, judging expiry by the service's clock so tests can move past it.
type tokenStore struct {
	q   *db.Queries
	now func() time.Time
}

var _ opaquetoken.Store[User] = tokenStore{}

// SaveToken records a new token of u.
func (s tokenStore) SaveToken(ctx context.Context, hash []byte, u User, expires time.Time) error {
	return s.q.InsertBrandToken(ctx, db.InsertBrandTokenParams{TokenHash: hash, UserID: u.ID, ExpiresAt: expires})
}

// TokenOwner resolves an unexpired token to its user. The expiry is not read back: brands does not
// cache resolved tokens, so logout and a password change revoke at once.
func (s tokenStore) TokenOwner(ctx context.Context, hash []byte) (User, time.Time, error) {
	row, err := s.q.GetBrandUserByToken(ctx, db.GetBrandUserByTokenParams{TokenHash: hash, Now: s.now()})
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, time.Time{}, opaquetoken.ErrInvalid
	}
	if err != nil {
		return User{}, time.Time{}, err
	}
	return User{ID: row.ID, Email: row.Email, Name: row.Name, IsAdmin: row.IsAdmin, CreatedAt: row.CreatedAt}, time.Time{}, nil
}

// DeleteExpiredTokens deletes the rows of expired tokens.
func (s tokenStore) DeleteExpiredTokens(ctx context.Context) (int64, error) {
	return s.q.DeleteExpiredBrandTokens(ctx, s.now())
}
