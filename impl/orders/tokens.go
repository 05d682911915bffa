package orders

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/opaquetoken"
)

// DefaultTokenTTL is how long an access token lives unless configured otherwise (the seed's 24 h).
const DefaultTokenTTL = 24 * time.Hour

// TokenStore keeps the orders API's access tokens (their SHA-256) in PostgreSQL. It implements
// opaquetoken.Store; a resolved token's owner is a Principal (a value, as brands').
type TokenStore struct{ q *db.Queries }

var _ opaquetoken.Store[Principal] = TokenStore{}

// TokenRevocationChannel is the channel on which PostgreSQL notifies the hash of every deleted
// order_tokens row (db/schema/00100_token_revocation_notify.sql), for opaquetoken.Watch.
const TokenRevocationChannel = "order_tokens_revoked"

// NewTokenStore returns the token store over q.
func NewTokenStore(q *db.Queries) TokenStore { return TokenStore{q: q} }

// SaveToken records a new token of p.
func (s TokenStore) SaveToken(ctx context.Context, hash []byte, p Principal, expires time.Time) error {
	return s.q.CreateOrderToken(ctx, db.CreateOrderTokenParams{Hash: hash, UserID: p.ID, ExpiresAt: expires})
}

// TokenOwner resolves an unexpired token (judged by the database's clock) to its user.
func (s TokenStore) TokenOwner(ctx context.Context, hash []byte) (Principal, time.Time, error) {
	row, err := s.q.GetOrderTokenUser(ctx, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, time.Time{}, opaquetoken.ErrInvalid
	}
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	return Principal{ID: row.ID, Username: row.Username, Type: UserType(row.UserType)}, row.ExpiresAt, nil
}

// DeleteExpiredTokens deletes the tokens past their expiry.
func (s TokenStore) DeleteExpiredTokens(ctx context.Context) (int64, error) {
	return s.q.DeleteExpiredOrderTokens(ctx)
}
