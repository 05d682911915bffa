package brands

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// EnsureAdmin makes sure an admin with this email exists, for the configured first admin:
//   - no user has the email (any case): an admin is created with pw;
//   - an admin has it: nothing changes (the admin may have changed the password since);
//   - a non-admin has it: that user becomes an admin, its password becomes pw and all its tokens
//     are revoked. Whoever registered the address first therefore cannot keep the account once the
//     operator names it as the admin.
//
// It reports whether anything changed.
func (s *Service) EnsureAdmin(ctx context.Context, email, name, pw string) (bool, error) {
	var v checks
	email = checkEmail(&v, email)
	name = checkName(&v, "name", name, MaxNameLen)
	checkPassword(&v, "password", pw)
	if err := v.orNil(); err != nil {
		return false, err
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return false, err
	}
	return s.ensureAdmin(ctx, email, name, hash, false)
}

// EnsureAdminWithHash is EnsureAdmin for a password already hashed (a PHC string password.Parse
// reads): dev mode's admin, whose published password is stored as a precomputed hash.
func (s *Service) EnsureAdminWithHash(ctx context.Context, email, name, hash string) (bool, error) {
	var v checks
	email = checkEmail(&v, email)
	name = checkName(&v, "name", name, MaxNameLen)
	if err := v.orNil(); err != nil {
		return false, err
	}
	if _, err := password.Parse(hash); err != nil {
		return false, err
	}
	return s.ensureAdmin(ctx, email, name, hash, false)
}

func (s *Service) ensureAdmin(ctx context.Context, email, name, hash string, retried bool) (bool, error) {
	changed := false
	err := pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		changed = false
		q := s.q.WithTx(tx)
		u, err := q.GetBrandUserByEmailForUpdate(ctx, email)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			_, err := q.CreateBrandUser(ctx, db.CreateBrandUserParams{Email: email, Name: name, PasswordHash: hash, IsAdmin: true})
			if isEmailTaken(err) {
				return errRetry // registered meanwhile: look again
			}
			changed = err == nil
			return err
		case err != nil:
			return err
		case u.IsAdmin:
			return nil
		}
		if err := q.PromoteBrandUser(ctx, db.PromoteBrandUserParams{ID: u.ID, PasswordHash: hash}); err != nil {
			return err
		}
		changed = true
		return q.DeleteAllBrandTokens(ctx, u.ID)
	})
	if errors.Is(err, errRetry) && !retried {
		// The row exists now, so the second pass finds it.
		return s.ensureAdmin(ctx, email, name, hash, true)
	}
	return changed, err
}

// errRetry asks EnsureAdmin to start over after losing a race with a registration.
var errRetry = errors.New("brands: retry")
