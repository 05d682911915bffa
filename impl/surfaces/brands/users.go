package brands

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// User is a registered user, without any secret.
type User struct {
	ID        string
	Email     string
	Name      string
	IsAdmin   bool
	CreatedAt time.Time
}

// Profile is a user with the brands it subscribes to, oldest subscription first.
type Profile struct {
	User
	Subscriptions []Brand
}

func isEmailTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "brand_users_email_key"
}

// Registered is what a registration creates: the user and its first access token.
type Registered struct {
	User
	Token string
}

// Register creates a user and issues its first access token.
func (s *Service) Register(ctx context.Context, name, email, pw string) (Registered, error) {
	var v checks
	name = checkName(&v, "name", name, MaxNameLen)
	email = checkEmail(&v, email)
	checkPassword(&v, "password", pw)
	if err := v.orNil(); err != nil {
		return Registered{}, err
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return Registered{}, err
	}
	return s.register(ctx, name, email, hash)
}

// RegisterWithHash is Register for a password already hashed (a PHC string password.Parse reads):
// dev mode's demo user, whose published password is stored as a precomputed hash.
func (s *Service) RegisterWithHash(ctx context.Context, name, email, hash string) (Registered, error) {
	var v checks
	name = checkName(&v, "name", name, MaxNameLen)
	email = checkEmail(&v, email)
	if err := v.orNil(); err != nil {
		return Registered{}, err
	}
	if _, err := password.Parse(hash); err != nil {
		return Registered{}, err
	}
	return s.register(ctx, name, email, hash)
}

// register stores a user with its password hash and issues its first access token.
func (s *Service) register(ctx context.Context, name, email, hash string) (Registered, error) {
	return pgtx.Write(ctx, s.pool, func(tx pgx.Tx) (Registered, error) {
		q := s.q.WithTx(tx)
		row, err := q.CreateBrandUser(ctx, db.CreateBrandUserParams{Email: email, Name: name, PasswordHash: hash})
		if isEmailTaken(err) {
			return Registered{}, domainerr.Taken
		}
		if err != nil {
			return Registered{}, err
		}
		u := User{ID: row.ID, Email: row.Email, Name: row.Name, IsAdmin: row.IsAdmin, CreatedAt: row.CreatedAt}
		// Issued in the same transaction as the user, so a user never exists without its token.
		tok, err := s.tokens.IssueTo(ctx, NewTokenStore(q, s.now), Principal{UserID: row.ID, IsAdmin: row.IsAdmin})
		return Registered{User: u, Token: tok}, err
	})
}

// Authenticate checks the credentials and returns the user as a principal; the HTTP edge issues
// the access token. An unknown email and a wrong password both give domainerr.InvalidCredentials after
// the same amount of hashing work.
func (s *Service) Authenticate(ctx context.Context, email, pw string) (Principal, error) {
	email = strings.TrimSpace(email)
	row, err := s.q.GetBrandUserCredentials(ctx, email)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Principal{}, err
	}
	ok, err := s.hasher.Verify(ctx, row.PasswordHash, pw) // "" for an unknown user: dummy work, false
	if err != nil {
		return Principal{}, err
	}
	if !ok {
		return Principal{}, domainerr.InvalidCredentials
	}
	return Principal{UserID: row.ID, IsAdmin: row.IsAdmin}, nil
}

// DeviceAccount is the id and credential version brands' device tokens are bound to besides the
// email (device.Lookup, loginguard.Guard.BindDevices): the user's id and password hash, so a
// password change ends the user's devices and a user who registers an email its owner gave up
// inherits none of them; "" when no user has the email.
func (s *Service) DeviceAccount(ctx context.Context, email string) (id, version string, err error) {
	row, err := s.q.GetBrandUserCredentials(ctx, strings.TrimSpace(email))
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return row.ID, row.PasswordHash, nil
}

// ResetPassword replaces the caller's password after checking the current one, and revokes every
// token of the caller except keep (the one the request presented).
func (s *Service) ResetPassword(ctx context.Context, p Principal, keep, current, next string) error {
	var v checks
	checkPassword(&v, "newPassword", next)
	if err := v.orNil(); err != nil {
		return err
	}
	// Hash outside the transaction: it is the slow part and needs no lock.
	newHash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return err
	}
	var revoked [][]byte
	err = pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		// The row lock serializes concurrent changes, so each one checks the password in force.
		stored, err := q.GetBrandUserPasswordHashForUpdate(ctx, p.UserID)
		if errors.Is(err, pgx.ErrNoRows) {
			return domainerr.Unauthenticated
		}
		if err != nil {
			return err
		}
		ok, err := s.hasher.Verify(ctx, stored, current)
		if err != nil {
			return err
		}
		if !ok {
			return ErrWrongPassword
		}
		if err := q.SetBrandUserPassword(ctx, db.SetBrandUserPasswordParams{ID: p.UserID, PasswordHash: newHash}); err != nil {
			return err
		}
		revoked, err = q.DeleteOtherBrandTokens(ctx, db.DeleteOtherBrandTokensParams{UserID: p.UserID, TokenHash: opaquetoken.Hash(keep)})
		return err
	})
	if err != nil {
		return err
	}
	// Every replica drops them when PostgreSQL reports the deletes; this one does at once, so the
	// caller's next request with an old token is refused even before that.
	for _, h := range revoked {
		s.tokens.ForgetHash(h)
	}
	return nil
}

// EditProfile changes the caller's name and/or email; an empty value keeps the field, and at least
// one must be given.
func (s *Service) EditProfile(ctx context.Context, p Principal, name, email string) error {
	var v checks
	params := db.UpdateBrandUserProfileParams{ID: p.UserID}
	if strings.TrimSpace(name) != "" {
		params.Name = pgtype.Text{String: checkName(&v, "name", name, MaxNameLen), Valid: true}
	}
	if strings.TrimSpace(email) != "" {
		params.Email = pgtype.Text{String: checkEmail(&v, email), Valid: true}
	}
	if !params.Name.Valid && !params.Email.Valid {
		v.add(invalid.Some("", "body", []string{"name", "email"}))
	}
	if err := v.orNil(); err != nil {
		return err
	}
	n, err := pgtx.Do(ctx, func() (int64, error) { return s.q.UpdateBrandUserProfile(ctx, params) })
	if isEmailTaken(err) {
		return domainerr.Taken
	}
	if err == nil && n == 0 {
		return domainerr.Unauthenticated
	}
	return err
}

// Me returns the caller's profile with the brands it subscribes to: in one query, and a second
// only for a caller without subscriptions.
func (s *Service) Me(ctx context.Context, p Principal) (Profile, error) {
	rows, err := s.q.GetBrandMeRows(ctx, p.UserID)
	if err != nil {
		return Profile{}, err
	}
	if len(rows) == 0 {
		u, err := s.q.GetBrandProfile(ctx, p.UserID)
		if errors.Is(err, pgx.ErrNoRows) {
			return Profile{}, domainerr.Unauthenticated
		}
		if err != nil {
			return Profile{}, err
		}
		return Profile{User: User{ID: u.ID, Email: u.Email, Name: u.Name, IsAdmin: u.IsAdmin, CreatedAt: u.CreatedAt},
			Subscriptions: []Brand{}}, nil
	}
	u := rows[0]
	out := Profile{User: User{ID: u.ID, Email: u.Email, Name: u.Name, IsAdmin: u.IsAdmin, CreatedAt: u.CreatedAt}}
	out.Subscriptions = make([]Brand, len(rows))
	for i, r := range rows {
		out.Subscriptions[i] = brandOf(r.BrandsCounted)
	}
	return out, nil
}
