package orders

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgread"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// Bounds of user input, mirrored in api/orders.yaml (bounds_test.go fails when the two differ) and
// in the table constraints.
const (
	MinUsername    = 3
	MaxUsername    = 32
	MinPassword    = 8
	MaxPassword    = 128
	MaxDescription = 2000
)

var usernameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Counter scopes: the exact sizes of the three kinds of lists.
const (
	scopeWaiting   = "waiting"
	scopeCustomer  = "customer"
	scopePerformer = "performer"
)

// Service is the orders domain over PostgreSQL.
type Service struct {
	pool   *pgxpool.Pool
	q      *db.Queries
	hasher *password.Hasher
	limits Limits
	// reads picks the pool of the list pages: a standby that has the caller's writes, or pool.
	reads *pgread.Reader
	// share bounds the list pages one user reads at once (Limits.ListShare).
	share *share
	// writes bounds the writes and own-account reads one user runs at once (Limits.WriteShare).
	writes *writeShare
	// deep bounds the deep list pages (deepOffset or more rows in) all users read at once: half
	// the pool, at least 1, so many accounts paging deep together leave the other half to
	// everyone's first pages.
	deep chan struct{}
	// listSettings and listSettingsGeneric give a list page its statement_timeout, the second
	// also a generic plan (listPipelined).
	listSettings, listSettingsGeneric string
}

// DefaultMaxHeld is how many orders one performer may hold (IN PROGRESS and READY) at once
// unless configured otherwise.
const DefaultMaxHeld = 10

// DefaultReadyTimeout is how long an order may stay READY without its customer's answer before
// the server accepts it (AcceptStale), unless configured otherwise: two weeks, time enough for a
// customer to look at the work and reject it, after which the performer is paid rather than held.
const DefaultReadyTimeout = 14 * 24 * time.Hour

// DefaultRetakeCooldown is how long a performer whose order was rejected, released or expired may
// not take that order again, unless configured otherwise: long enough for other performers to
// see it on the new-orders list, so a hoarder cannot keep an order by giving it up and taking it
// back at once.
const DefaultRetakeCooldown = 24 * time.Hour

// DefaultListTimeout is how long one page's query may run unless configured otherwise.
const DefaultListTimeout = 2 * time.Second

// Limits bound what one user may hold, so that no one can take the marketplace hostage.
type Limits struct {
	// MaxHeld is how many orders one performer may hold at once, IN PROGRESS and READY alike (a
	// READY order is still the performer's until its customer accepts or rejects it); a take
	// beyond it is refused with ErrTooManyHeld. 0 means DefaultMaxHeld.
	MaxHeld int
	// RetakeCooldown is how long a performer whose order was rejected, released or expired may
	// not take it again (ErrCoolingDown). 0 means DefaultRetakeCooldown.
	RetakeCooldown time.Duration
	// ListShare is how many list pages one user reads at once in this process while others read
	// too; more wait for one of the user's own places, so one user cannot hold the whole pool.
	// While no other user reads and the list reads in flight leave a connection of the pool free,
	// a user's shallow page goes at once even beyond its places (share; a lone user is not held
	// to a part of an idle pool). 0 means a quarter of the pool's connections, at least 1.
	ListShare int
	// ListTimeout bounds one page's query (statement_timeout); a page past it is refused with
	// ErrListTooSlow. 0 means DefaultListTimeout.
	ListTimeout time.Duration
	// WriteShare is how many writes (creates and moves) and reads of the caller's own account
	// (User) one user runs at once in this process; up to sixteen times as many more wait for one
	// of the user's places, and past that, finding none free within a second, they are refused
	// with ErrTooManyAtOnce (writeShare), so one user on many connections cannot hold the pool.
	// 0 means a quarter of the pool's connections, at least 1.
	WriteShare int
}

// Config configures a Service (as brands.Config does brands'); the zero value is the defaults.
type Config struct {
	// Hasher hashes passwords; nil uses password.Default.
	Hasher *password.Hasher
	// Limits bound what one user may hold; zero fields take the defaults.
	Limits Limits
}

// NewService returns a Service storing in pool.
func NewService(pool *pgxpool.Pool, cfg Config) *Service {
	hasher, limits := cfg.Hasher, cfg.Limits
	if hasher == nil {
		hasher = password.New(password.Default)
	}
	if limits.MaxHeld <= 0 {
		limits.MaxHeld = DefaultMaxHeld
	}
	if limits.RetakeCooldown <= 0 {
		limits.RetakeCooldown = DefaultRetakeCooldown
	}
	if limits.ListShare <= 0 {
		limits.ListShare = max(1, int(pool.Config().MaxConns)/4)
	}
	if limits.ListTimeout <= 0 {
		limits.ListTimeout = DefaultListTimeout
	}
	if limits.WriteShare <= 0 {
		limits.WriteShare = max(1, int(pool.Config().MaxConns)/4)
	}
	return &Service{pool: pool, q: db.New(pool), hasher: hasher, limits: limits, reads: pgread.New(pool, nil),
		share: newShare(limits.ListShare, int(pool.Config().MaxConns)), writes: newWriteShare(limits.WriteShare), deep: make(chan struct{}, max(1, int(pool.Config().MaxConns)/2)),
		listSettings: listSettings(limits.ListTimeout, false), listSettingsGeneric: listSettings(limits.ListTimeout, true)}
}

// ReadFrom sends the list pages through r (a standby with read-your-writes); without it they read
// from the Service's pool.
func (s *Service) ReadFrom(r *pgread.Reader) { s.reads = r }

// Register creates a user of role t with the role's starting balance, recorded as a ledger grant.
func (s *Service) Register(ctx context.Context, username, pw string, t UserType) (User, error) {
	if err := CheckNewUser(username, pw, t); err != nil {
		return User{}, err
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return User{}, err
	}
	return s.create(ctx, username, hash, t)
}

// RegisterWithHash is Register for a password already hashed (a PHC string password.Parse reads):
// dev mode's demo users, whose published passwords are stored as precomputed hashes so that no
// start of a dev server spends argon2 work on them.
func (s *Service) RegisterWithHash(ctx context.Context, username, hash string, t UserType) (User, error) {
	if _, err := password.Parse(hash); err != nil {
		return User{}, err
	}
	if err := JoinInvalid(nameAndTypeProblems(username, t)...); err != nil {
		return User{}, err
	}
	return s.create(ctx, username, hash, t)
}

// create stores a user of role t with its password hash and the role's starting balance.
func (s *Service) create(ctx context.Context, username, hash string, t UserType) (User, error) {
	u, err := pgtx.Write(ctx, s.pool, func(tx pgx.Tx) (User, error) {
		q := s.q.WithTx(tx)
		row, err := q.CreateOrderUser(ctx, db.CreateOrderUserParams{
			Username: username, PasswordHash: hash, UserType: string(t), Balance: int64(InitialBalance(t)),
		})
		if err != nil {
			return User{}, err
		}
		return User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)},
			q.AddOrderLedgerEntry(ctx, db.AddOrderLedgerEntryParams{
				UserID: pgtype.Int8{Int64: row.ID, Valid: true}, Kind: "grant", Amount: row.Balance,
			})
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return User{}, refuse(domainerr.Taken, "username %s is already taken", username)
	}
	return u, err
}

// Authenticate checks a username (any letter case) and password. An unknown user and a wrong
// password both give domainerr.InvalidCredentials after the same amount of hashing work.
func (s *Service) Authenticate(ctx context.Context, username, pw string) (User, error) {
	if len(pw) > 4*MaxPassword {
		return User{}, domainerr.InvalidCredentials
	}
	var (
		row db.GetOrderUserByUsernameRow
		err = pgx.ErrNoRows
	)
	// A name registration would refuse cannot belong to anyone, and must not reach SQL: a NUL
	// byte in it would make PostgreSQL fail the query (a 500 instead of invalid_grant).
	if n := utf8.RuneCountInString(username); n >= MinUsername && n <= MaxUsername && usernameRE.MatchString(username) {
		row, err = s.q.GetOrderUserByUsername(ctx, username)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Dummy work, so an unknown user costs what a wrong password does; a hasher error (busy,
		// cancelled) is passed on, since no password was checked and no guess may be counted.
		if _, err := s.hasher.Verify(ctx, "", pw); err != nil {
			return User{}, err
		}
		return User{}, domainerr.InvalidCredentials
	}
	if err != nil {
		return User{}, err
	}
	ok, err := s.hasher.Verify(ctx, row.PasswordHash, pw)
	if err != nil {
		return User{}, err
	}
	if !ok {
		return User{}, domainerr.InvalidCredentials
	}
	return User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)}, nil
}

// DeviceAccount is the id and credential version orders' device tokens are bound to besides the
// username (device.Lookup, loginguard.Guard.BindDevices): the user's id and password hash, so a
// password change ends the user's devices and whoever registers a username its owner gave up
// (after a delete or a rename) inherits none of them; "" when no user has the name.
func (s *Service) DeviceAccount(ctx context.Context, username string) (id, version string, err error) {
	if n := utf8.RuneCountInString(username); n < MinUsername || n > MaxUsername || !usernameRE.MatchString(username) {
		return "", "", nil // a name registration refuses is nobody's, and must not reach SQL
	}
	row, err := s.q.GetOrderUserByUsername(ctx, username)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return strconv.FormatInt(row.ID, 10), row.PasswordHash, nil
}

// User reads a user with the current balance, in the user's write share (Limits.WriteShare): the
// one caller is the user itself (GET /authenticated).
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	release, err := s.writes.acquire(ctx, id)
	if err != nil {
		return User{}, err
	}
	defer release()
	row, err := s.q.GetOrderUser(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, refuse(domainerr.NotFound, "user %d not found", id)
	}
	if err != nil {
		return User{}, err
	}
	return User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)}, nil
}

// Order reads one order for the caller: its customer and its performer may read it, and so may
// any performer while it is WAITING (it is on the new-orders list then, so that reveals nothing).
// Anyone else gets domainerr.NotFound, as for an order that does not exist, so ids reveal nothing.
func (s *Service) Order(ctx context.Context, p Principal, id int64) (Order, error) {
	row, err := s.q.GetVisibleOrder(ctx, db.GetVisibleOrderParams{ID: id, CallerID: p.ID, CallerIsPerformer: p.Type == Performer})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, refuse(domainerr.NotFound, "order %d not found", id)
	}
	if err != nil {
		return Order{}, err
	}
	return Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: row.PerformerID.Int64, PerformerName: row.PerformerName,
		Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
}

// CreateOrder publishes a WAITING order of the calling customer. price is in kopecks and must lie
// in [0.01, money.MaxPrice]. The order reserves its price plus commission of the customer's
// balance until it is accepted or cancelled; when the balance, less what the customer's other open
// orders reserve, cannot cover that, nothing is created and ErrInsufficientFunds is returned. So
// every order a performer can take is one its customer can pay.
func (s *Service) CreateOrder(ctx context.Context, p Principal, description string, price money.Kopecks) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(domainerr.Forbidden, "only customers create orders")
	}
	if err := JoinInvalid(checkDescription(description), checkPriceRange(price)); err != nil {
		return Order{}, err
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	// One statement, one round trip; under an Idempotency-Key, one transaction with its answer.
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		row, err := db.New(c).CreateOrder(ctx, db.CreateOrderParams{CustomerID: p.ID, Description: description, Price: int64(price)})
		return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
			Status: Status(row.Status), CreatedAt: row.CreatedAt}, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explainFunds(ctx, p, price)
	}
	return o, err
}

// explainFunds says why a create reserved nothing: the customer's free balance (balance minus
// what its open orders reserve) is below the new order's price plus commission.
func (s *Service) explainFunds(ctx context.Context, p Principal, price money.Kopecks) error {
	f, err := s.q.GetOrderFunds(ctx, db.GetOrderFundsParams{ID: p.ID, Price: int64(price)})
	if err != nil {
		return err
	}
	balance, reserved, commission := money.Kopecks(f.Balance), money.Kopecks(f.Reserved), money.Kopecks(f.Commission)
	return refuse(ErrInsufficientFunds, "an order of %s costs %s with the commission (%s); %s of the balance %s is free, %s being reserved for open orders",
		price, price+commission, commission, balance-reserved, balance, reserved)
}

// Accept completes a READY order of the calling customer and pays for it in one statement, the
// database function order_accept, which holds every rule of the payment (who may accept, from
// which state, the commission formula, the funds check, the fixed locking order) so they are
// stated once. The customer is debited price plus commission, the performer credited the price,
// the platform the commission, each movement a ledger row. Without enough funds nothing changes
// and ErrInsufficientFunds is returned.
func (s *Service) Accept(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(domainerr.Forbidden, "only the order's customer may accept it")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	// Every outcome but "completed" is an error inside the write, so that under an
	// Idempotency-Key no answer is kept for a refusal (nothing moved).
	return pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		r, err := db.New(c).AcceptOrder(ctx, db.AcceptOrderParams{OrderID: id, CallerID: p.ID})
		if err != nil {
			return Order{}, err
		}
		return acceptOutcome(id, r)
	})
}

// acceptOutcome is the order an acceptance completed, or the refusal its outcome names.
func acceptOutcome(id int64, r db.AcceptOrderRow) (Order, error) {
	price, commission := money.Kopecks(r.Price), money.Kopecks(r.Commission)
	switch r.Outcome {
	case "completed":
		return Order{ID: id, CustomerID: r.CustomerID, PerformerID: r.PerformerID, PerformerName: r.PerformerName,
			Description: r.Description, Price: price, Status: Status(r.Status), CreatedAt: r.CreatedAt}, nil
	case "not_found":
		return Order{}, refuse(domainerr.NotFound, "order %d not found", id)
	case "forbidden":
		return Order{}, refuse(domainerr.Forbidden, "only the order's customer may accept it")
	case "invalid_state":
		return Order{}, refuse(ErrInvalidState, "order %d is %s; accept needs %s", id, r.Status, Ready)
	case "insufficient_funds":
		return Order{}, refuse(ErrInsufficientFunds, "accepting order %d costs %s (price %s + commission %s); balance is %s",
			id, price+commission, price, commission, money.Kopecks(r.Balance))
	}
	return Order{}, fmt.Errorf("accept of order %d: unknown outcome %q", id, r.Outcome)
}
