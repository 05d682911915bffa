// Package brands is the domain of the brands API: users who register and log in with opaque access
// tokens, brands that admins manage, and subscriptions of users to brands. It knows nothing of HTTP;
// impl/brands/httpapi translates requests into calls of Service and its errors into status codes.
//
// Single brands and profiles are rendered to JSON by PostgreSQL in their one query. The two brand
// lists are cached, and each request checks the cache against a digest of the listed rows' versions,
// which is cheaper than rendering and exact (see listCache); a miss reads the rows and renders them
// in one pass without reflection (renderList).
package brands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/opaquetoken"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/pgtx"
)

// Domain errors; the HTTP layer maps each to one status code.
var (
	// ErrNotFound: no brand has the id (or the id is not a 24-hex-digit id).
	ErrNotFound = errors.New("brands: not found")
	// ErrEmailTaken: another user has the email, compared without regard to case.
	ErrEmailTaken = errors.New("brands: email taken")
	// ErrInvalidCredentials: login with an unknown email or a wrong password (deliberately one error).
	ErrInvalidCredentials = errors.New("brands: invalid credentials")
	// ErrUnauthenticated: the access token is missing, unknown or revoked.
	ErrUnauthenticated = errors.New("brands: unauthenticated")
	// ErrWrongPassword: a password change gave a wrong current password.
	ErrWrongPassword = errors.New("brands: wrong current password")
	// ErrForbidden: the user is not an admin.
	ErrForbidden = errors.New("brands: admin only")
	// ErrUnavailable: the brand exists but is not available for subscription.
	ErrUnavailable = errors.New("brands: brand unavailable")
)

// FieldProblem names one invalid input field.
type FieldProblem struct {
	Field   string
	Message string
}

// ValidationError lists the invalid fields of one call.
type ValidationError struct {
	Problems []FieldProblem
}

// Error lists the problems on one line.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "brands: invalid input: " + strings.Join(parts, "; ")
}

func (e *ValidationError) add(field, msg string) {
	e.Problems = append(e.Problems, FieldProblem{field, msg})
}

func (e *ValidationError) orNil() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e
}

// Bounds of user input, mirrored in api/brands.yaml.
const (
	MaxNameLen      = 100
	MaxEmailLen     = 254
	MinPasswordLen  = 8
	MaxPasswordLen  = 128
	MaxBrandNameLen = 200
	MaxDescription  = 5000
	MaxURLLen       = 2000
)

// User is a registered user, without any secret.
type User struct {
	ID        string
	Email     string
	Name      string
	IsAdmin   bool
	CreatedAt time.Time
}

// Service is the brands API's domain logic over PostgreSQL.
type Service struct {
	pool   *pgxpool.Pool
	q      *db.Queries
	hasher *password.Hasher
	tokens *opaquetoken.Tokens[User]
	now    func() time.Time

	// The two public lists are cached, each validated against the database on every request.
	available, featured listCache
}

// DefaultTokenTTL is how long an access token lives unless configured otherwise.
const DefaultTokenTTL = 30 * 24 * time.Hour

// Config configures a Service.
type Config struct {
	// Hasher hashes passwords; nil uses password.Default.
	Hasher *password.Hasher
	// TokenTTL is the lifetime of an access token from its issue; 0 uses DefaultTokenTTL.
	TokenTTL time.Duration
	// Now is the clock that token expiry is judged by; nil uses time.Now. Tests move it forward.
	Now func() time.Time
}

// NewService returns a Service storing in pool.
func NewService(pool *pgxpool.Pool, cfg Config) *Service {
	if cfg.Hasher == nil {
		cfg.Hasher = password.New(password.Default)
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	q := db.New(pool)
	// No cache (CacheFor 0): logout and a password change must revoke at once.
	tokens, err := opaquetoken.New(tokenStore{q: q, now: cfg.Now}, opaquetoken.Options{TTL: cfg.TokenTTL, Now: cfg.Now})
	if err != nil {
		panic(err) // unreachable: the TTL was made positive above
	}
	return &Service{pool: pool, q: q, hasher: cfg.Hasher, tokens: tokens, now: cfg.Now}
}

// SweepExpiredTokens deletes the rows of expired tokens and reports how many there were.
func (s *Service) SweepExpiredTokens(ctx context.Context) (int64, error) {
	return s.tokens.Sweep(ctx)
}

var idRE = regexp.MustCompile(`^[0-9a-f]{24}$`)

// ValidID reports whether s has the form of a user or brand id.
func ValidID(s string) bool { return idRE.MatchString(s) }

func checkName(v *ValidationError, field, name string, maxLen int) string {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		v.add(field, "must be valid UTF-8")
	case n == 0:
		v.add(field, "must not be empty")
	case n > maxLen:
		v.add(field, fmt.Sprintf("must be at most %d characters", maxLen))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		v.add(field, "must not contain control characters")
	}
	return name
}

func checkEmail(v *ValidationError, email string) string {
	email = strings.TrimSpace(email)
	if len(email) > MaxEmailLen {
		v.add("email", fmt.Sprintf("must be at most %d characters", MaxEmailLen))
		return email
	}
	addr, err := mail.ParseAddress(email)
	// Only a bare address is accepted ("Ada <ada@x>" parses too, but is not an email field value).
	if err != nil || addr.Address != email || addr.Name != "" {
		v.add("email", "must be an email address")
		return email
	}
	if at := strings.LastIndexByte(email, '@'); at < 1 || !strings.Contains(email[at+1:], ".") {
		v.add("email", "must be an email address")
	}
	return email
}

func checkPassword(v *ValidationError, field, pw string) {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen || n > MaxPasswordLen {
		v.add(field, fmt.Sprintf("must be %d to %d characters", MinPasswordLen, MaxPasswordLen))
	}
}

func isEmailTaken(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "brand_users_email_key"
}

// Register creates a user and issues its first access token.
func (s *Service) Register(ctx context.Context, name, email, pw string) (User, string, error) {
	var v ValidationError
	name = checkName(&v, "name", name, MaxNameLen)
	email = checkEmail(&v, email)
	checkPassword(&v, "password", pw)
	if err := v.orNil(); err != nil {
		return User{}, "", err
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return User{}, "", err
	}
	tok, tokHash, err := opaquetoken.Mint()
	if err != nil {
		return User{}, "", err
	}
	var u User
	err = pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.CreateBrandUser(ctx, db.CreateBrandUserParams{Email: email, Name: name, PasswordHash: hash})
		if isEmailTaken(err) {
			return ErrEmailTaken
		}
		if err != nil {
			return err
		}
		u = User{ID: row.ID, Email: row.Email, Name: row.Name, IsAdmin: row.IsAdmin, CreatedAt: row.CreatedAt}
		// Issued in the same transaction as the user, so a user never exists without its token.
		return q.InsertBrandToken(ctx, db.InsertBrandTokenParams{TokenHash: tokHash, UserID: row.ID, ExpiresAt: s.now().Add(s.tokens.TTL())})
	})
	if err != nil {
		return User{}, "", err
	}
	return u, tok, nil
}

// Login checks the credentials and issues a new access token. An unknown email and a wrong password
// both give ErrInvalidCredentials after the same amount of hashing work.
func (s *Service) Login(ctx context.Context, email, pw string) (string, error) {
	email = strings.TrimSpace(email)
	row, err := s.q.GetBrandUserCredentials(ctx, email)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", err
	}
	ok, err := s.hasher.Verify(ctx, row.PasswordHash, pw) // "" for an unknown user: dummy work, false
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrInvalidCredentials
	}
	return s.tokens.Issue(ctx, User{ID: row.ID})
}

// Authenticate returns the owner of an unexpired access token.
func (s *Service) Authenticate(ctx context.Context, tok string) (User, error) {
	u, err := s.tokens.Resolve(ctx, tok)
	if errors.Is(err, opaquetoken.ErrInvalid) {
		return User{}, ErrUnauthenticated
	}
	return u, err
}

// ResetPassword replaces the password of the token's owner after checking the current one, and
// revokes every other token of that user; tok itself stays valid.
func (s *Service) ResetPassword(ctx context.Context, tok, current, next string) error {
	u, err := s.Authenticate(ctx, tok)
	if err != nil {
		return err
	}
	var v ValidationError
	checkPassword(&v, "newPassword", next)
	if err := v.orNil(); err != nil {
		return err
	}
	// Hash outside the transaction: it is the slow part and needs no lock.
	newHash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return err
	}
	return pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		// The row lock serializes concurrent changes, so each one checks the password in force.
		stored, err := q.GetBrandUserPasswordHashForUpdate(ctx, u.ID)
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
		if err := q.SetBrandUserPassword(ctx, db.SetBrandUserPasswordParams{ID: u.ID, PasswordHash: newHash}); err != nil {
			return err
		}
		return q.DeleteOtherBrandTokens(ctx, db.DeleteOtherBrandTokensParams{UserID: u.ID, TokenHash: opaquetoken.Hash(tok)})
	})
}

// EditProfile changes the name and/or email of the token's owner; an empty value keeps the field,
// and at least one must be given.
func (s *Service) EditProfile(ctx context.Context, tok, name, email string) error {
	u, err := s.Authenticate(ctx, tok)
	if err != nil {
		return err
	}
	var v ValidationError
	p := db.UpdateBrandUserProfileParams{ID: u.ID}
	if strings.TrimSpace(name) != "" {
		p.Name = pgtype.Text{String: checkName(&v, "name", name, MaxNameLen), Valid: true}
	}
	if strings.TrimSpace(email) != "" {
		p.Email = pgtype.Text{String: checkEmail(&v, email), Valid: true}
	}
	if !p.Name.Valid && !p.Email.Valid {
		v.add("body", "give at least one of name and email")
	}
	if err := v.orNil(); err != nil {
		return err
	}
	_, err = s.q.UpdateBrandUserProfile(ctx, p)
	if isEmailTaken(err) {
		return ErrEmailTaken
	}
	return err
}

// Logout revokes tok at once.
func (s *Service) Logout(ctx context.Context, tok string) error {
	if !opaquetoken.WellFormed(tok) {
		return ErrUnauthenticated
	}
	n, err := s.q.DeleteBrandToken(ctx, db.DeleteBrandTokenParams{TokenHash: opaquetoken.Hash(tok), Now: s.now()})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrUnauthenticated
	}
	return nil
}

// MeJSON renders the token's owner as the JSON profile: the presented token, the user's fields and
// the full brand objects of its subscriptions, oldest first. It is one query.
func (s *Service) MeJSON(ctx context.Context, tok string) ([]byte, error) {
	if !opaquetoken.WellFormed(tok) {
		return nil, ErrUnauthenticated
	}
	rows, err := s.q.GetBrandMeRows(ctx, db.GetBrandMeRowsParams{TokenHash: opaquetoken.Hash(tok), Now: s.now()})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrUnauthenticated
	}
	return renderMe(tok, rows), nil
}

// listCache holds the last rendering of a brand list with the digest of the row versions it was
// rendered from (see db/schema/00021_brands_version.sql).
type listCache struct {
	p atomic.Pointer[renderedList]
}

type renderedList struct {
	digest, body string
}

// get serves the cached rendering when the list's rows are exactly those it was rendered from
// (one cheap digest query), and renders afresh otherwise. A stale entry can never be served: the
// digest changes with every insert, update (subscriber counts included) and delete of a listed row,
// and a fresh rendering and its digest come from one snapshot. Concurrent misses may each render;
// the last one stored wins, and any of them is correct for its digest.
func (c *listCache) get(ctx context.Context, digest func(context.Context) (string, error),
	render func(context.Context) (string, string, error)) (string, error) {
	if cur := c.p.Load(); cur != nil {
		d, err := digest(ctx)
		if err != nil {
			return "", err
		}
		if d == cur.digest {
			return cur.body, nil
		}
	}
	d, body, err := render(ctx)
	if err != nil {
		return "", err
	}
	c.p.Store(&renderedList{digest: d, body: body})
	return body, nil
}

// ListJSON renders every available brand as a JSON array, in creation order.
func (s *Service) ListJSON(ctx context.Context) (string, error) {
	return s.available.get(ctx, s.q.AvailableBrandsDigest, func(ctx context.Context) (string, string, error) {
		rows, err := s.q.ListAvailableBrandRows(ctx)
		if err != nil {
			return "", "", err
		}
		d, body := renderList(rows)
		return d, body, nil
	})
}

// FeaturedJSON renders every featured brand, available or not, as a JSON array, in creation order.
func (s *Service) FeaturedJSON(ctx context.Context) (string, error) {
	return s.featured.get(ctx, s.q.FeaturedBrandsDigest, func(ctx context.Context) (string, string, error) {
		rows, err := s.q.ListFeaturedBrandRows(ctx)
		if err != nil {
			return "", "", err
		}
		conv := make([]listRow, len(rows))
		for i, r := range rows {
			conv[i] = listRow(r)
		}
		d, body := renderList(conv)
		return d, body, nil
	})
}

// BrandJSON renders one brand, available or not, as a JSON object.
func (s *Service) BrandJSON(ctx context.Context, id string) (string, error) {
	if !ValidID(id) {
		return "", ErrNotFound
	}
	b, err := s.q.GetBrandJSON(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return b, err
}

// Subscribe subscribes the token's owner to an available brand. It reports whether a subscription
// was created: false means the user was subscribed already, and nothing changed.
func (s *Service) Subscribe(ctx context.Context, tok, brandID string) (bool, error) {
	u, err := s.Authenticate(ctx, tok)
	if err != nil {
		return false, err
	}
	if !ValidID(brandID) {
		return false, ErrNotFound
	}
	n, err := s.q.SubscribeBrand(ctx, db.SubscribeBrandParams{UserID: u.ID, BrandID: brandID})
	if err != nil {
		return false, err
	}
	if n == 1 {
		return true, nil
	}
	// Nothing inserted: an unknown brand, an unavailable one, or an existing subscription.
	avail, err := s.q.GetBrandAvailability(ctx, brandID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, ErrNotFound
	case err != nil:
		return false, err
	case !avail:
		return false, ErrUnavailable
	}
	return false, nil
}

// Unsubscribe ends the token owner's subscription to a brand. It reports whether there was one:
// false means the user was not subscribed, and nothing changed.
func (s *Service) Unsubscribe(ctx context.Context, tok, brandID string) (bool, error) {
	u, err := s.Authenticate(ctx, tok)
	if err != nil {
		return false, err
	}
	if !ValidID(brandID) {
		return false, ErrNotFound
	}
	n, err := s.q.UnsubscribeBrand(ctx, db.UnsubscribeBrandParams{UserID: u.ID, BrandID: brandID})
	if err != nil {
		return false, err
	}
	if n == 1 {
		return true, nil
	}
	if _, err := s.q.GetBrandAvailability(ctx, brandID); errors.Is(err, pgx.ErrNoRows) {
		return false, ErrNotFound
	} else if err != nil {
		return false, err
	}
	return false, nil
}

// Product is one element of a brand's products: a free-form JSON object.
type Product = map[string]any

// BrandInput is a new brand.
type BrandInput struct {
	Name          string
	Description   string
	URL           string
	FeaturedImage string
	Availability  bool
	IsFeatured    bool
	Products      []Product
}

// BrandPatch changes the non-nil fields of a brand.
type BrandPatch struct {
	Name          *string
	Description   *string
	URL           *string
	FeaturedImage *string
	Availability  *bool
	IsFeatured    *bool
	Products      *[]Product
}

func checkURL(v *ValidationError, field, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if len(s) > MaxURLLen {
		v.add(field, fmt.Sprintf("must be at most %d characters", MaxURLLen))
		return s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(field, "must be an absolute http or https URL")
	}
	return s
}

func checkDescription(v *ValidationError, s string) string {
	if utf8.RuneCountInString(s) > MaxDescription || !utf8.ValidString(s) {
		v.add("description", fmt.Sprintf("must be valid text of at most %d characters", MaxDescription))
	}
	return s
}

func productsJSON(v *ValidationError, ps []Product) []byte {
	if ps == nil {
		ps = []Product{}
	}
	for _, p := range ps {
		if p == nil {
			v.add("products", "every product must be a JSON object")
			return nil
		}
	}
	b, err := json.Marshal(ps)
	if err != nil {
		v.add("products", "must be an array of JSON objects")
	}
	return b
}

func (s *Service) requireAdmin(ctx context.Context, tok string) error {
	u, err := s.Authenticate(ctx, tok)
	if err != nil {
		return err
	}
	if !u.IsAdmin {
		return ErrForbidden
	}
	return nil
}

// CreateBrand creates a brand with no subscribers, for an admin, and renders it as JSON.
func (s *Service) CreateBrand(ctx context.Context, tok string, in BrandInput) (string, error) {
	if err := s.requireAdmin(ctx, tok); err != nil {
		return "", err
	}
	var v ValidationError
	p := db.CreateBrandParams{
		Name:          checkName(&v, "name", in.Name, MaxBrandNameLen),
		Description:   checkDescription(&v, in.Description),
		Url:           checkURL(&v, "url", in.URL),
		FeaturedImage: checkURL(&v, "featuredImage", in.FeaturedImage),
		Availability:  in.Availability,
		IsFeatured:    in.IsFeatured,
		Products:      productsJSON(&v, in.Products),
	}
	if err := v.orNil(); err != nil {
		return "", err
	}
	return s.q.CreateBrand(ctx, p)
}

func optText(v *string, check func(string) string) pgtype.Text {
	if v == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: check(*v), Valid: true}
}

func optBool(v *bool) pgtype.Bool {
	if v == nil {
		return pgtype.Bool{}
	}
	return pgtype.Bool{Bool: *v, Valid: true}
}

// UpdateBrand changes the given fields of a brand, for an admin, and renders it as JSON.
func (s *Service) UpdateBrand(ctx context.Context, tok, id string, in BrandPatch) (string, error) {
	if err := s.requireAdmin(ctx, tok); err != nil {
		return "", err
	}
	if !ValidID(id) {
		return "", ErrNotFound
	}
	var v ValidationError
	p := db.UpdateBrandParams{
		ID:            id,
		Name:          optText(in.Name, func(x string) string { return checkName(&v, "name", x, MaxBrandNameLen) }),
		Description:   optText(in.Description, func(x string) string { return checkDescription(&v, x) }),
		Url:           optText(in.URL, func(x string) string { return checkURL(&v, "url", x) }),
		FeaturedImage: optText(in.FeaturedImage, func(x string) string { return checkURL(&v, "featuredImage", x) }),
		Availability:  optBool(in.Availability),
		IsFeatured:    optBool(in.IsFeatured),
	}
	if in.Products != nil {
		p.Products = productsJSON(&v, *in.Products)
	}
	if err := v.orNil(); err != nil {
		return "", err
	}
	b, err := s.q.UpdateBrand(ctx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return b, err
}

// DeleteBrand deletes a brand and its subscriptions, for an admin.
func (s *Service) DeleteBrand(ctx context.Context, tok, id string) error {
	if err := s.requireAdmin(ctx, tok); err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	n, err := s.q.DeleteBrand(ctx, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// EnsureAdmin makes sure an admin with this email exists, for the configured first admin:
//   - no user has the email (any case): an admin is created with pw;
//   - an admin has it: nothing changes (the admin may have changed the password since);
//   - a non-admin has it: that user becomes an admin, its password becomes pw and all its tokens
//     are revoked. Whoever registered the address first therefore cannot keep the account once the
//     operator names it as the admin.
//
// It reports whether anything changed.
func (s *Service) EnsureAdmin(ctx context.Context, email, name, pw string) (bool, error) {
	var v ValidationError
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
