package brands

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// Subscribe subscribes the caller to an available brand. It reports whether a subscription
// was created: false means the user was subscribed already, and nothing changed.
func (s *Service) Subscribe(ctx context.Context, p Principal, brandID string) (bool, error) {
	if !ValidID(brandID) {
		return false, domainerr.NotFound
	}
	// One statement, and reads only when it inserted nothing; under an Idempotency-Key, one
	// transaction with its answer, which is kept for "already subscribed" too.
	return pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (bool, error) {
		q := db.New(c)
		n, err := q.SubscribeBrand(ctx, db.SubscribeBrandParams{UserID: p.UserID, BrandID: brandID})
		if err != nil || n == 1 {
			return n == 1, err
		}
		// Nothing inserted: an unknown brand, an unavailable one, or an existing subscription.
		avail, err := q.GetBrandAvailability(ctx, brandID)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return false, domainerr.NotFound
		case err != nil:
			return false, err
		case !avail:
			return false, ErrUnavailable
		}
		return false, nil
	})
}

// Unsubscribe ends the caller's subscription to a brand. It reports whether there was one:
// false means the user was not subscribed, and nothing changed.
func (s *Service) Unsubscribe(ctx context.Context, p Principal, brandID string) (bool, error) {
	if !ValidID(brandID) {
		return false, domainerr.NotFound
	}
	n, err := pgtx.Do(ctx, func() (int64, error) {
		return s.q.UnsubscribeBrand(ctx, db.UnsubscribeBrandParams{UserID: p.UserID, BrandID: brandID})
	})
	if err != nil {
		return false, err
	}
	if n == 1 {
		return true, nil
	}
	if _, err := s.q.GetBrandAvailability(ctx, brandID); errors.Is(err, pgx.ErrNoRows) {
		return false, domainerr.NotFound
	} else if err != nil {
		return false, err
	}
	return false, nil
}
