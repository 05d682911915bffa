// Package brands is the domain of the brands API: users who register and log in with opaque access
// tokens, brands that admins manage, and subscriptions of users to brands. It knows nothing of HTTP:
// its methods take the caller as a Principal (resolved once, from the access token, by the HTTP
// edge) and return structs; impl/surfaces/brands/httpapi renders them and maps the errors to statuses.
//
// The files follow the concepts: users.go (accounts and profiles), tokens.go (access tokens),
// catalog.go (brands and their lists), subscriptions.go, admin.go (the first admin), input.go
// (validation of user input).
package brands

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/platform/pgread"
)

// Domain errors; the HTTP layer maps each to one status code. The refusals every domain shares
// (not found, forbidden, invalid credentials, an email taken, unauthenticated) are domainerr's.
var (
	// ErrInvalidInput: one or more input fields are invalid; the error is an invalid.Problems
	// listing them (the shared invalid.ErrInput).
	ErrInvalidInput = invalid.ErrInput
	// ErrWrongPassword: a password change gave a wrong current password.
	ErrWrongPassword = errors.New("brands: wrong current password")
	// ErrUnavailable: the brand exists but is not available for subscription.
	ErrUnavailable = errors.New("brands: brand unavailable")
)

// Principal is the authenticated caller of a request: the owner of the access token it presented.
type Principal struct {
	UserID  string
	IsAdmin bool
}

// Service is the brands API's domain logic over PostgreSQL.
type Service struct {
	pool   *pgxpool.Pool
	q      *db.Queries
	hasher *password.Hasher
	tokens *opaquetoken.Tokens[Principal]
	now    func() time.Time
	// reads picks the pool of the catalog's reads: a standby that has the caller's writes, or pool.
	reads *pgread.Reader
}

// ReadFrom sends the catalog's reads (the lists, their digests, one brand) through r (a standby
// with read-your-writes); without it they read from the Service's pool.
func (s *Service) ReadFrom(r *pgread.Reader) { s.reads = r }

// DefaultTokenTTL is how long an access token lives unless configured otherwise.
const DefaultTokenTTL = 30 * 24 * time.Hour

// Config configures a Service.
type Config struct {
	// Hasher hashes passwords; nil uses password.Default.
	Hasher *password.Hasher
	// Tokens issues and revokes the access tokens, over NewTokenStore; the HTTP edge builds it
	// (and resolves and sweeps with it), as the orders edge does. The domain uses it where a token
	// is part of a transaction: Register issues the first token with the user, Logout revokes one.
	// nil uses tokens of DefaultTokenTTL over NewTokenStore, uncached.
	Tokens *opaquetoken.Tokens[Principal]
	// Now is the clock that token expiry is judged by, the one Tokens' store uses; nil uses
	// time.Now. Tests move it forward.
	Now func() time.Time
}

// NewService returns a Service storing in pool.
func NewService(pool *pgxpool.Pool, cfg Config) *Service {
	if cfg.Hasher == nil {
		cfg.Hasher = password.New(password.Default)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tokens == nil {
		// Without the edge's, tokens live DefaultTokenTTL and are not cached. New fails only for a
		// TTL that is not positive, which the constant is not.
		cfg.Tokens, _ = opaquetoken.New(NewTokenStore(db.New(pool), cfg.Now),
			opaquetoken.Options{TTL: DefaultTokenTTL, Now: cfg.Now})
	}
	return &Service{pool: pool, q: db.New(pool), hasher: cfg.Hasher, tokens: cfg.Tokens, now: cfg.Now, reads: pgread.New(pool, nil)}
}
