package orders

import (
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
)

// DefaultTokenTTL is how long an access token lives unless configured otherwise (the seed's 24 h).
const DefaultTokenTTL = 24 * time.Hour

// TokenRevocationChannel is the channel on which PostgreSQL notifies the hash of every deleted
// order_tokens row (db/schema/00100_token_revocation_notify.sql, 00250), for opaquetoken.Watch.
const TokenRevocationChannel = "order_tokens_revoked"

// NewTokenStore is the orders API's store of access tokens (their SHA-256) in PostgreSQL: the
// shared opaquetoken.Table over order_tokens, whose owner is a Principal, over q, judging expiry
// by now (nil: time.Now).
func NewTokenStore(q *db.Queries, now func() time.Time) opaquetoken.Table[Principal] {
	return opaquetoken.TableOf(q.InsertOrderToken, func(p Principal) int64 { return p.ID }, q.GetOrderUserByToken,
		func(r db.GetOrderUserByTokenRow) (Principal, time.Time) {
			return Principal{ID: r.ID, Username: r.Username, Type: UserType(r.UserType)}, r.ExpiresAt
		}, q.DeleteExpiredOrderTokens, now)
}
