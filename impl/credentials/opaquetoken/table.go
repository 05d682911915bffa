package opaquetoken

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/platform/sweep"
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

// DeleteExpiredTokens implements Store, in batches (sweep.Batches: the table's DeleteExpired
// deletes up to sweep.BatchSize rows).
func (t Table[Owner]) DeleteExpiredTokens(ctx context.Context) (int64, error) {
	return sweep.Batches(ctx, func(ctx context.Context) (int64, error) { return t.DeleteExpired(ctx, t.now()) })
}

// InsertArgs is the parameters of a token table's insert statement as sqlc generates them: the
// token's hash, its user's id, its expiry.
type InsertArgs[ID any] interface {
	~struct {
		TokenHash []byte
		UserID    ID
		ExpiresAt time.Time
	}
}

// OwnerArgs is the parameters of a token table's owner lookup as sqlc generates them: the hash,
// and the time the token must be unexpired at.
type OwnerArgs interface {
	~struct {
		TokenHash []byte
		Now       time.Time
	}
}

// TableOf is the Table over a token table's three sqlc statements, so a surface names its
// statements and how its owner maps to and from them, and nothing else: insert with userID(owner)
// as the user id, owner with ownerOf reading the owner and the expiry from its row, and
// deleteExpired; expiry is judged by now (nil: time.Now).
func TableOf[Owner, ID any, I InsertArgs[ID], O OwnerArgs, Row any](
	insert func(context.Context, I) error, userID func(Owner) ID,
	owner func(context.Context, O) (Row, error), ownerOf func(Row) (Owner, time.Time),
	deleteExpired func(context.Context, time.Time) (int64, error), now func() time.Time,
) Table[Owner] {
	return Table[Owner]{
		Insert: func(ctx context.Context, hash []byte, o Owner, expires time.Time) error {
			return insert(ctx, I(struct {
				TokenHash []byte
				UserID    ID
				ExpiresAt time.Time
			}{hash, userID(o), expires}))
		},
		Owner: func(ctx context.Context, hash []byte, at time.Time) (Owner, time.Time, error) {
			row, err := owner(ctx, O(struct {
				TokenHash []byte
				Now       time.Time
			}{hash, at}))
			o, expires := ownerOf(row)
			return o, expires, err
		},
		DeleteExpired: deleteExpired,
		Now:           now,
	}
}
