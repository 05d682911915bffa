package opaquetoken

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Table is the Store of one surface's token table, given its three queries (sqlc's): what every
// surface's store would otherwise repeat, the clock expiry is judged by and no row read as
// ErrInvalid, is here once. orders and brands each fill one with their table's queries.
type Table[Owner any] struct {
	// Insert records hash as a token of owner until expires.
	Insert func(ctx context.Context, hash []byte, owner Owner, expires time.Time) error
	// Owner reads the owner and the expiry of the token with hash unexpired at now; pgx.ErrNoRows
	// when there is none.
	Owner func(ctx context.Context, hash []byte, now time.Time) (Owner, time.Time, error)
	// DeleteExpired deletes the rows of the tokens expired at now and reports how many went.
	DeleteExpired func(ctx context.Context, now time.Time) (int64, error)
	// Now is the clock expiry is judged by, so tests can move past it (nil: time.Now).
	Now func() time.Time
}

var _ Store[struct{}] = Table[struct{}]{}

func (t Table[Owner]) now() time.Time {
	if t.Now == nil {
		return time.Now()
	}
	return t.Now()
}

// SaveToken implements Store.
func (t Table[Owner]) SaveToken(ctx context.Context, hash []byte, owner Owner, expires time.Time) error {
	return t.Insert(ctx, hash, owner, expires)
}

// TokenOwner implements Store: no unexpired row is ErrInvalid.
func (t Table[Owner]) TokenOwner(ctx context.Context, hash []byte) (Owner, time.Time, error) {
	owner, expires, err := t.Owner(ctx, hash, t.now())
	if errors.Is(err, pgx.ErrNoRows) {
		var none Owner
		return none, time.Time{}, ErrInvalid
	}
	return owner, expires, err
}

// DeleteExpiredTokens implements Store.
func (t Table[Owner]) DeleteExpiredTokens(ctx context.Context) (int64, error) {
	return t.DeleteExpired(ctx, t.now())
}
