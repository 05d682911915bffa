// Package token issues and checks the orders API's access tokens.
//
// Tokens are opaque: 32 random bytes (256 bits) in unpadded base64url. The database keeps only
// their SHA-256 with the user and the expiry, so a leaked table yields no usable token and a token
// can be revoked by deleting its row. Checking a token is on every request's path, so verified
// tokens are kept in a bounded in-process cache until their expiry; this stays correct because
// nothing changes a token's user or expiry after issue (there is no revocation endpoint; one
// would have to clear the cache entry too).
package token

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/orders"
)

// ErrInvalid is an unknown, malformed or expired token.
var ErrInvalid = errors.New("invalid token")

// maxCache bounds the cache; past it the cache is emptied and refills from the database, which is
// simple and cannot serve a stale entry.
const maxCache = 100_000

// Store issues tokens and resolves them to principals.
type Store struct {
	q   *db.Queries
	ttl time.Duration
	now func() time.Time

	mu    sync.RWMutex
	cache map[string]entry
}

type entry struct {
	p       *orders.Principal // shared, read-only: callers get the pointer without copying
	expires time.Time
}

// NewStore returns a Store issuing tokens that live ttl.
func NewStore(q *db.Queries, ttl time.Duration) *Store {
	return &Store{q: q, ttl: ttl, now: time.Now, cache: make(map[string]entry)}
}

// TTL is the lifetime of issued tokens.
func (s *Store) TTL() time.Duration { return s.ttl }

// Issue creates a token for user p.
func (s *Store) Issue(ctx context.Context, p orders.Principal) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(tok))
	expires := s.now().Add(s.ttl)
	if err := s.q.CreateOrderToken(ctx, db.CreateOrderTokenParams{Hash: sum[:], UserID: p.ID, ExpiresAt: expires}); err != nil {
		return "", err
	}
	s.put(tok, entry{p: &p, expires: expires})
	return tok, nil
}

// Lookup resolves a token to its user, or ErrInvalid. The returned principal is shared and must
// not be modified.
func (s *Store) Lookup(ctx context.Context, tok string) (*orders.Principal, error) {
	now := s.now()
	s.mu.RLock()
	e, ok := s.cache[tok]
	s.mu.RUnlock()
	if ok {
		if now.Before(e.expires) {
			return e.p, nil
		}
		s.mu.Lock()
		delete(s.cache, tok)
		s.mu.Unlock()
		return nil, ErrInvalid
	}
	// A well-formed token is exactly 43 base64url characters; anything else cannot match a row.
	if len(tok) != 43 {
		return nil, ErrInvalid
	}
	sum := sha256.Sum256([]byte(tok))
	row, err := s.q.GetOrderTokenUser(ctx, sum[:])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, err
	}
	p := &orders.Principal{ID: row.ID, Username: row.Username, Type: orders.UserType(row.UserType)}
	s.put(tok, entry{p: p, expires: row.ExpiresAt})
	return p, nil
}

func (s *Store) put(tok string, e entry) {
	s.mu.Lock()
	if len(s.cache) >= maxCache {
		s.cache = make(map[string]entry)
	}
	s.cache[tok] = e
	s.mu.Unlock()
}

// Sweep deletes expired tokens from the database and the cache; the server calls it periodically.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	now := s.now()
	s.mu.Lock()
	for k, e := range s.cache {
		if !now.Before(e.expires) {
			delete(s.cache, k)
		}
	}
	s.mu.Unlock()
	return s.q.DeleteExpiredOrderTokens(ctx)
}
