package orders

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
)

// DefaultTokenTTL is how long an access token lives unless configured otherwise (the seed's 24 h).
const DefaultTokenTTL = 24 * time.Hour

// TokenStore keeps the orders API's access tokens (their SHA-256) in PostgreSQL. It implements
// opaquetoken.Store; a resolved token's owner is a Principal (a value, as brands').
type TokenStore struct {
	q   *db.Queries
	now func() time.Time
}

var _ opaquetoken.Store[Principal] = TokenStore{}

// TokenRevocationChannel is the channel on which PostgreSQL notifies the hash of every deleted
// order_tokens row (db/schema/00100_token_revocation_notify.sql, 00250), for opaquetoken.Watch.
const TokenRevocationChannel = "order_tokens_revoked"

// NewTokenStore returns the token store over q, judging expiry by now (nil: time.Now), as the
// brands store does.
func NewTokenStore(q *db.Queries, now func() time.Time) TokenStore {
	if now == nil {
		now = time.Now
	}
	return TokenStore{q: q, now: now}
}

// SaveToken records a new token of p.
func (s TokenStore) SaveToken(ctx context.Context, hash []byte, p Principal, expires time.Time) error {
	return s.q.InsertOrderToken(ctx, db.InsertOrderTokenParams{TokenHash: hash, UserID: p.ID, ExpiresAt: expires})
}

// TokenOwner resolves a token unexpired by the store's clock to its user and its expiry.
func (s TokenStore) TokenOwner(ctx context.Context, hash []byte) (Principal, time.Time, error) {
	row, err := s.q.GetOrderUserByToken(ctx, db.GetOrderUserByTokenParams{TokenHash: hash, Now: s.now()})
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
	return s.q.DeleteExpiredOrderTokens(ctx, s.now())
}
