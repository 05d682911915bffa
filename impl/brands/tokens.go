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

var _ opaquetoken.Store[Principal] = tokenStore{}

// SaveToken records a new token of p.
func (s tokenStore) SaveToken(ctx context.Context, hash []byte, p Principal, expires time.Time) error {
	return s.q.InsertBrandToken(ctx, db.InsertBrandTokenParams{TokenHash: hash, UserID: p.UserID, ExpiresAt: expires})
}

// TokenOwner resolves an unexpired token to its user. The expiry is not read back (a token row may
// hold 'infinity', which time.Time cannot): brands does not cache resolved tokens.
func (s tokenStore) TokenOwner(ctx context.Context, hash []byte) (Principal, time.Time, error) {
	row, err := s.q.GetBrandUserByToken(ctx, db.GetBrandUserByTokenParams{TokenHash: hash, Now: s.now()})
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, time.Time{}, opaquetoken.ErrInvalid
	}
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	return Principal{UserID: row.ID, IsAdmin: row.IsAdmin}, time.Time{}, nil
}

// DeleteExpiredTokens deletes the rows of expired tokens.
func (s tokenStore) DeleteExpiredTokens(ctx context.Context) (int64, error) {
	return s.q.DeleteExpiredBrandTokens(ctx, s.now())
}

// SweepExpiredTokens deletes the rows of expired tokens and reports how many there were.
func (s *Service) SweepExpiredTokens(ctx context.Context) (int64, error) {
	return s.tokens.Sweep(ctx)
}

// Resolve returns the owner of an unexpired access token, or ErrUnauthenticated. The HTTP edge's
// bearer middleware calls it once per request.
func (s *Service) Resolve(ctx context.Context, tok string) (Principal, error) {
	p, err := s.tokens.Resolve(ctx, tok)
	if errors.Is(err, opaquetoken.ErrInvalid) {
		return Principal{}, ErrUnauthenticated
	}
	return p, err
}

// Logout revokes tok, the token the caller presented, at once.
func (s *Service) Logout(ctx context.Context, tok string) error {
	if !opaquetoken.WellFormed(tok) {
		return ErrUnauthenticated
	}
	n, err := s.q.DeleteBrandToken(ctx, db.DeleteBrandTokenParams{TokenHash: opaquetoken.Hash(tok), Now: s.now()})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrUnauthenticated
	}
	s.tokens.Forget(tok)
	return nil
}
