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

// The acceptance runs in two pipelined round trips rather than one per statement (BEGIN, lock the
// order, lock the users, settle, COMMIT), because under many concurrent clients the round trips,
// not the statements, bound its throughput. The statements are here rather than in db/queries
// since sqlc's generated methods each send their own request and cannot share a pipeline.
const (
	acceptLockOrderSQL = `SELECT customer_id, performer_id, description, price, status, created_at
FROM orders WHERE id = $1 FOR UPDATE`
	// Both users of the order, locked in ascending id order: the fixed order every payment uses.
	acceptLockUsersSQL = `SELECT id, username, balance FROM order_users
WHERE id IN (SELECT customer_id FROM orders WHERE id = $1 UNION ALL SELECT performer_id FROM orders WHERE id = $1)
ORDER BY id FOR UPDATE`
	// Pays for a READY order whose users are locked and whose funds were checked: debit, credit,
	// commission, three ledger rows and COMPLETED, in one statement.
	acceptSettleSQL = `WITH debit AS (
    UPDATE order_users SET balance = balance - $3 WHERE id = $2
), credit AS (
    UPDATE order_users SET balance = balance + $4 WHERE id = $5
), platform AS (
    UPDATE order_platform_slots SET balance = balance + $6 WHERE slot = $7
), entries AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES
        ($2, $1, 'payment', -$3::bigint), ($5, $1, 'earning', $4), (NULL, $1, 'commission', $6)
)
UPDATE orders SET status = 'COMPLETED', updated_at = now()
WHERE id = $1 AND status = 'READY' AND customer_id = $2`
)

// Accept completes a READY order of the calling customer and pays for it in one transaction: the
// customer is debited price plus commission, the performer credited the price, the platform the
// commission, each movement a ledger row. Rows are locked in a fixed order (the order, then both
// users by ascending id, then a platform slot), so concurrent acceptances neither deadlock nor pay
// twice. Without enough funds nothing changes and ErrInsufficientFunds is returned.
func (s *Service) Accept(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(ErrForbidden, "only the order's customer may accept it")
	}
	for attempt := 1; ; attempt++ {
		o, err := s.accept(ctx, p, id)
		if attempt < 5 && pgtx.Retryable(err) {
			continue
		}
		return o, err
	}
}

func (s *Service) accept(ctx context.Context, p Principal, id int64) (o Order, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return Order{}, err
	}
	defer conn.Release()
	open := false
	defer func() {
		// Any way out but a commit rolls back; a connection left in a transaction would be
		// destroyed by the pool anyway.
		if open {
			if _, rbErr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil && err == nil {
				err = rbErr
			}
		}
	}()

	// Round trip 1: begin, lock the order, lock its users.
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(acceptLockOrderSQL, id)
	b.Queue(acceptLockUsersSQL, id)
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err != nil {
		br.Close()
		return Order{}, err
	}
	open = true
	var (
		customerID, price int64
		performerID       pgtype.Int8
		status            string
	)
	o.ID = id
	err = br.QueryRow().Scan(&customerID, &performerID, &o.Description, &price, &status, &o.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		br.Close()
		return Order{}, refuse(ErrNotFound, "order %d not found", id)
	}
	if err != nil {
		br.Close()
		return Order{}, err
	}
	type locked struct {
		name    string
		balance money.Kopecks
	}
	users := map[int64]locked{}
	rows, err := br.Query()
	if err == nil {
		for rows.Next() {
			var uid, bal int64
			var name string
			if err = rows.Scan(&uid, &name, &bal); err != nil {
				break
			}
			users[uid] = locked{name, money.Kopecks(bal)}
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Order{}, err
	}

	if customerID != p.ID {
		return Order{}, refuse(ErrForbidden, "only the order's customer may accept it")
	}
	if Status(status) != Ready {
		return Order{}, refuse(ErrInvalidState, "order %d is %s; accept needs %s", id, status, Ready)
	}
	o.CustomerID, o.PerformerID, o.Price = customerID, performerID.Int64, money.Kopecks(price)
	o.PerformerName = users[o.PerformerID].name
	commission := money.Commission(o.Price)
	total := o.Price + commission
	if bal := users[customerID].balance; bal < total {
		return Order{}, refuse(ErrInsufficientFunds, "accepting order %d costs %s (price %s + commission %s); balance is %s",
			id, total, o.Price, commission, bal)
	}

	// Round trip 2: settle and commit. The CHECK (balance >= 0) still guards the debit.
	b = &pgx.Batch{}
	b.Queue(acceptSettleSQL, id, customerID, int64(total), int64(o.Price), o.PerformerID, int64(commission), int32(id%platformSlotCount))
	b.Queue("COMMIT")
	br = conn.SendBatch(ctx, b)
	tag, err := br.Exec()
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("settling order %d: %d rows completed", id, tag.RowsAffected())
	}
	if err == nil {
		_, err = br.Exec()
		if err == nil {
			open = false
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Order{}, err
	}
	o.Status = Completed
	return o, nil
}
