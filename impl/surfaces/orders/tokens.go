package orders

import (
	"context"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
)

// DefaultTokenTTL is how long an access token lives unless configured otherwise (the seed's 24 h).
const DefaultTokenTTL = 24 * time.Hour

// TokenStore keeps the orders API's access tokens (their SHA-256) in PostgreSQL: the shared
// opaquetoken.Table over order_tokens; a resolved token's owner is a Principal.
type TokenStore = opaquetoken.Table[Principal]

// TokenRevocationChannel is the channel on which PostgreSQL notifies the hash of every deleted
// order_tokens row (db/schema/00100_token_revocation_notify.sql, 00250), for opaquetoken.Watch.
const TokenRevocationChannel = "order_tokens_revoked"

// NewTokenStore returns the token store over q, judging expiry by now (nil: time.Now), as the
// brands store does.
func NewTokenStore(q *db.Queries, now func() time.Time) TokenStore {
	return TokenStore{
		Insert: func(ctx context.Context, hash []byte, p Principal, expires time.Time) error {
			return q.InsertOrderToken(ctx, db.InsertOrderTokenParams{TokenHash: hash, UserID: p.ID, ExpiresAt: expires})
		},
		Owner: func(ctx context.Context, hash []byte, now time.Time) (Principal, time.Time, error) {
			row, err := q.GetOrderUserByToken(ctx, db.GetOrderUserByTokenParams{TokenHash: hash, Now: now})
			return Principal{ID: row.ID, Username: row.Username, Type: UserType(row.UserType)}, row.ExpiresAt, err
		},
		DeleteExpired: q.DeleteExpiredOrderTokens,
		Now:           now,
	}
}
