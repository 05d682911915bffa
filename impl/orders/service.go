package orders

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/orders/money"
	"github.com/triadhq/triad/impl/orders/password"
	"github.com/triadhq/triad/impl/pgtx"
)

// Bounds of user input, mirrored in api/orders.yaml and in the table constraints.
const (
	MinUsername       = 3
	MaxUsername       = 32
	MinPassword       = 8
	MaxPassword       = 128
	MaxDescription    = 2000
	platformSlotCount = 16
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
}

// NewService returns a Service on pool hashing passwords with hasher.
func NewService(pool *pgxpool.Pool, hasher *password.Hasher) *Service {
	return &Service{pool: pool, q: db.New(pool), hasher: hasher}
}

// Register creates a user of role t with the role's starting balance, recorded as a ledger grant.
func (s *Service) Register(ctx context.Context, username, pw string, t UserType) (User, error) {
	switch n := utf8.RuneCountInString(username); {
	case n < MinUsername || n > MaxUsername:
		return User{}, invalid("username", "username must be %d to %d characters", MinUsername, MaxUsername)
	case !usernameRE.MatchString(username):
		return User{}, invalid("username", "username may hold only letters, digits, '.', '_' and '-'")
	}
	if n := utf8.RuneCountInString(pw); n < MinPassword || n > MaxPassword {
		return User{}, invalid("password", "password must be %d to %d characters", MinPassword, MaxPassword)
	}
	if !t.Valid() {
		return User{}, invalid("userType", "userType must be Customer or Performer")
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return User{}, err
	}
	var u User
	err = pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.CreateOrderUser(ctx, db.CreateOrderUserParams{
			Username: username, PasswordHash: hash, UserType: string(t), Balance: int64(InitialBalance(t)),
		})
		if err != nil {
			return err
		}
		u = User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)}
		return q.AddOrderLedgerEntry(ctx, db.AddOrderLedgerEntryParams{
			UserID: pgtype.Int8{Int64: row.ID, Valid: true}, Kind: "grant", Amount: row.Balance,
		})
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return User{}, refuse(ErrUsernameTaken, "username %s is already taken", username)
	}
	return u, err
}

// Authenticate checks a username (any letter case) and password. An unknown user and a wrong
// password both give ErrInvalidCredentials after the same amount of hashing work.
func (s *Service) Authenticate(ctx context.Context, username, pw string) (User, error) {
	if len(username) > 4*MaxUsername || len(pw) > 4*MaxPassword {
		return User{}, ErrInvalidCredentials
	}
	row, err := s.q.GetOrderUserByUsername(ctx, username)
	if errors.Is(err, pgx.ErrNoRows) {
		_, _ = s.hasher.Verify(ctx, "", pw)
		return User{}, ErrInvalidCredentials
	}
	if err != nil {
		return User{}, err
	}
	ok, err := s.hasher.Verify(ctx, row.PasswordHash, pw)
	if err != nil {
		return User{}, err
	}
	if !ok {
		return User{}, ErrInvalidCredentials
	}
	return User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)}, nil
}

// User reads a user with the current balance.
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	row, err := s.q.GetOrderUser(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, refuse(ErrNotFound, "user %d not found", id)
	}
	if err != nil {
		return User{}, err
	}
	return User{ID: row.ID, Username: row.Username, Type: UserType(row.UserType), Balance: money.Kopecks(row.Balance)}, nil
}

// CreateOrder publishes a WAITING order of the calling customer. price is in kopecks and must lie
// in [0.01, money.MaxPrice].
func (s *Service) CreateOrder(ctx context.Context, p Principal, description string, price money.Kopecks) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(ErrForbidden, "only customers create orders")
	}
	if strings.TrimSpace(description) == "" {
		return Order{}, invalid("description", "description must not be blank")
	}
	if utf8.RuneCountInString(description) > MaxDescription {
		return Order{}, invalid("description", "description must be at most %d characters", MaxDescription)
	}
	if price < 1 || price > money.MaxPrice {
		return Order{}, invalid("price", "price %s", money.ErrOutOfRange)
	}
	var o Order
	err := pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.CreateOrder(ctx, db.CreateOrderParams{CustomerID: p.ID, Description: description, Price: int64(price)})
		if err != nil {
			return err
		}
		o = Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
			Status: Status(row.Status), CreatedAt: row.CreatedAt}
		// Counters are always locked in the same order (waiting, then the user's) to avoid deadlocks.
		if err := q.IncOrderCounter(ctx, db.IncOrderCounterParams{Scope: scopeWaiting, OwnerID: 0}); err != nil {
			return err
		}
		return q.IncOrderCounter(ctx, db.IncOrderCounterParams{Scope: scopeCustomer, OwnerID: p.ID})
	})
	return o, err
}

// Take makes the calling performer the performer of a WAITING order (→ IN_PROGRESS). The move is
// one conditional UPDATE, so among concurrent callers exactly one wins; the others get
// ErrInvalidState.
func (s *Service) Take(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(ErrForbidden, "only performers take orders")
	}
	var o Order
	err := pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.TakeOrder(ctx, db.TakeOrderParams{ID: id, PerformerID: pgtype.Int8{Int64: p.ID, Valid: true}})
		if errors.Is(err, pgx.ErrNoRows) {
			return s.explain(ctx, q, p, id, "take", Waiting)
		}
		if err != nil {
			return err
		}
		o = Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
			Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}
		if err := q.DecOrderCounter(ctx, db.DecOrderCounterParams{Scope: scopeWaiting, OwnerID: 0}); err != nil {
			return err
		}
		return q.IncOrderCounter(ctx, db.IncOrderCounterParams{Scope: scopePerformer, OwnerID: p.ID})
	})
	return o, err
}

// Pass marks an IN_PROGRESS order of the calling performer READY, in one conditional UPDATE.
func (s *Service) Pass(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(ErrForbidden, "only the order's performer may pass it")
	}
	row, err := s.q.PassOrder(ctx, db.PassOrderParams{ID: id, PerformerID: pgtype.Int8{Int64: p.ID, Valid: true}})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, s.q, p, id, "pass", InProgress)
	}
	if err != nil {
		return Order{}, err
	}
	return Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
		Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
}

// explain turns a conditional UPDATE that matched no row into the reason: no such order, not the
// caller's, or the wrong state.
func (s *Service) explain(ctx context.Context, q *db.Queries, p Principal, id int64, action string, from Status) error {
	st, err := q.GetOrderState(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return refuse(ErrNotFound, "order %d not found", id)
	}
	if err != nil {
		return err
	}
	if action == "pass" && (!st.PerformerID.Valid || st.PerformerID.Int64 != p.ID) {
		return refuse(ErrForbidden, "only the order's performer may pass it")
	}
	return refuse(ErrInvalidState, "order %d is %s; %s needs %s", id, st.Status, action, from)
}

// Accept completes a READY order of the calling customer and pays for it in one transaction: the
// customer is debited price plus commission, the performer credited the price, the platform the
// commission, each movement a ledger row. Rows are locked in a fixed order (the order, then both
// users by ascending id, then a platform slot), so concurrent acceptances neither deadlock nor pay
// twice. Without enough funds nothing changes and ErrInsufficientFunds is returned.
func (s *Service) Accept(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(ErrForbidden, "only the order's customer may accept it")
	}
	var o Order
	err := pgtx.Run(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.GetOrderForUpdate(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return refuse(ErrNotFound, "order %d not found", id)
		}
		if err != nil {
			return err
		}
		if row.CustomerID != p.ID {
			return refuse(ErrForbidden, "only the order's customer may accept it")
		}
		if Status(row.Status) != Ready {
			return refuse(ErrInvalidState, "order %d is %s; accept needs %s", id, row.Status, Ready)
		}
		price := money.Kopecks(row.Price)
		commission := money.Commission(price)
		total := price + commission
		users, err := q.LockOrderUsers(ctx, []int64{row.CustomerID, row.PerformerID.Int64})
		if err != nil {
			return err
		}
		for _, u := range users {
			if u.ID == row.CustomerID && money.Kopecks(u.Balance) < total {
				return refuse(ErrInsufficientFunds, "accepting order %d costs %s (price %s + commission %s); balance is %s",
					id, total, price, commission, money.Kopecks(u.Balance))
			}
		}
		n, err := q.SettleOrder(ctx, db.SettleOrderParams{
			OrderID: id, CustomerID: row.CustomerID, PerformerID: row.PerformerID.Int64,
			Total: int64(total), Price: int64(price), Commission: int64(commission), Slot: int32(id % platformSlotCount),
		})
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("settling order %d: %d rows completed", id, n)
		}
		o = Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: row.PerformerID.Int64, PerformerName: row.PerformerName.String,
			Description: row.Description, Price: price, Status: Completed, CreatedAt: row.CreatedAt}
		return nil
	})
	return o, err
}
