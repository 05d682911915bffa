package brands

import (
	"context"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/kit/domainerr"
)

// TokenRevocationChannel is the channel on which PostgreSQL notifies the hash of every deleted
// brand_tokens row (db/schema/00100_token_revocation_notify.sql), for opaquetoken.Watch.
const TokenRevocationChannel = "brand_tokens_revoked"

// Logout ends the session of the user holding tok, the token the caller presented, on every device
// at once: the seed's "logging out resets the user token, so the old token stops being the user
// token" (brands-api.md, authentication rule 3). Every token of that user is deleted in one
// statement; this process's cache forgets them at once, and the other replicas drop them when
// PostgreSQL notifies the deletions. Until a logout, each login adds a token beside the others, so
// several devices stay signed in; the next login after it starts afresh.
func (s *Service) Logout(ctx context.Context, tok string) error {
	if !opaquetoken.WellFormed(tok) {
		return domainerr.Unauthenticated
	}
	revoked, err := s.q.DeleteBrandTokensOfHolder(ctx, db.DeleteBrandTokensOfHolderParams{TokenHash: opaquetoken.Hash(tok), Now: s.now()})
	if err != nil {
		return err
	}
	if len(revoked) == 0 {
		return domainerr.Unauthenticated
	}
	for _, h := range revoked {
		s.tokens.ForgetHash(h)
	}
	return nil
}

// NewTokenStore is the brands API's store of access tokens (their SHA-256) in PostgreSQL: the
// shared opaquetoken.Table over brand_tokens (a token issued before tokens expired holds
// 'infinity', read as the year 9999), whose owner is a Principal, over q, judging expiry by now
// (nil: time.Now).
func NewTokenStore(q *db.Queries, now func() time.Time) opaquetoken.Table[Principal] {
	return opaquetoken.TableOf(q.InsertBrandToken, func(p Principal) string { return p.UserID }, q.GetBrandUserByToken,
		func(r db.GetBrandUserByTokenRow) (Principal, time.Time) {
			return Principal{UserID: r.ID, IsAdmin: r.IsAdmin}, r.ExpiresAt
		},
		q.DeleteExpiredBrandTokens, now)
}
