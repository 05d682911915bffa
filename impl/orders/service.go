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
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/pgtx"
)

// Bounds of user input, mirrored in api/orders.yaml and in the table constraints.
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
	if len(pw) > 4*MaxPassword {
		return User{}, ErrInvalidCredentials
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
	if strings.ContainsRune(description, 0) {
		// PostgreSQL text cannot hold NUL; refuse it here rather than fail the insert.
		return Order{}, invalid("description", "description must not contain NUL characters")
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

// The acceptance is one pipelined round trip (BEGIN, lock the order, lock its users, settle,
// COMMIT) rather than one per statement, because under many concurrent clients the round trips,
// not the statements, bound its throughput. The statements are here rather than in db/queries
// since sqlc's generated methods each send their own request and cannot share a pipeline.
//
// The settle statement re-checks in SQL, on the rows the two locks made stable, exactly what
// accept checks in Go (the caller's READY order, funds for price + commission), so it moves
// money only when Go will report success; a refusal commits nothing but the released locks.
const (
	acceptLockOrderSQL = `SELECT customer_id, performer_id, description, price, status, created_at
FROM orders WHERE id = $1 FOR UPDATE`
	// Both users of the order, locked in ascending id order (the fixed order every payment uses),
	// and only when the caller's READY order will be paid: a refused call locks no one's account.
	acceptLockUsersSQL = `SELECT id, username, balance FROM order_users
WHERE id IN (SELECT u.id FROM orders o, LATERAL (VALUES (o.customer_id), (o.performer_id)) AS u(id)
             WHERE o.id = $1 AND o.customer_id = $2 AND o.status = 'READY')
ORDER BY id FOR UPDATE`
	// Debit price + commission (5%, rounded half-up to the kopeck: (price*5 + 50) / 100, the
	// formula of money.Commission), credit the price and the platform slot, write three ledger
	// rows and complete the order, all only when ok yields its row. Returns the commission.
	acceptSettleSQL = `WITH ok AS (
    SELECT o.id, o.customer_id, o.performer_id, o.price, (o.price * 5 + 50) / 100 AS commission
    FROM orders o JOIN order_users c ON c.id = o.customer_id
    WHERE o.id = $1 AND o.customer_id = $2 AND o.status = 'READY' AND c.balance >= o.price + (o.price * 5 + 50) / 100
), debit AS (
    UPDATE order_users u SET balance = u.balance - ok.price - ok.commission FROM ok WHERE u.id = ok.customer_id
), credit AS (
    UPDATE order_users u SET balance = u.balance + ok.price FROM ok WHERE u.id = ok.performer_id
), platform AS (
    UPDATE order_platform_slots s SET balance = s.balance + ok.commission FROM ok WHERE s.slot = ok.id % 16 -- slots 0..15
), entries AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount)
    SELECT ok.customer_id, ok.id, 'payment', -(ok.price + ok.commission) FROM ok
    UNION ALL SELECT ok.performer_id, ok.id, 'earning', ok.price FROM ok
    UNION ALL SELECT NULL, ok.id, 'commission', ok.commission FROM ok
)
UPDATE orders o SET status = 'COMPLETED', updated_at = now() FROM ok WHERE o.id = ok.id
RETURNING ok.commission`
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

	b := &pgx.Batch{}
	b.Queue("BEGIN")
	// The statements below are prepared once per connection; a generic plan spares PostgreSQL
	// re-planning them on every call (planning the settle statement costs as much as running it).
	b.Queue("SET LOCAL plan_cache_mode = force_generic_plan")
	b.Queue(acceptLockOrderSQL, id)
	b.Queue(acceptLockUsersSQL, id, p.ID)
	b.Queue(acceptSettleSQL, id, p.ID)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	var (
		customerID, price int64
		performerID       pgtype.Int8
		status            string
		found             bool
		settled           bool
		sqlCommission     int64
		users             = map[int64]struct {
			name    string
			balance money.Kopecks
		}{}
	)
	err = func() error {
		for range 2 { // BEGIN, SET LOCAL
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		err := br.QueryRow().Scan(&customerID, &performerID, &o.Description, &price, &status, &o.CreatedAt)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		found = err == nil
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			var uid, bal int64
			var name string
			if err := rows.Scan(&uid, &name, &bal); err != nil {
				rows.Close()
				return err
			}
			users[uid] = struct {
				name    string
				balance money.Kopecks
			}{name, money.Kopecks(bal)}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		err = br.QueryRow().Scan(&sqlCommission)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		settled = err == nil
		_, err = br.Exec() // COMMIT
		return err
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		pgtx.EndOpen(ctx, conn.Conn())
		return Order{}, err
	}

	o.ID, o.CustomerID, o.PerformerID, o.Price = id, customerID, performerID.Int64, money.Kopecks(price)
	o.PerformerName = users[o.PerformerID].name
	commission := money.Commission(o.Price)
	total := o.Price + commission
	var refusal error
	switch {
	case !found:
		refusal = refuse(ErrNotFound, "order %d not found", id)
	case customerID != p.ID:
		refusal = refuse(ErrForbidden, "only the order's customer may accept it")
	case Status(status) != Ready:
		refusal = refuse(ErrInvalidState, "order %d is %s; accept needs %s", id, status, Ready)
	case users[customerID].balance < total:
		refusal = refuse(ErrInsufficientFunds, "accepting order %d costs %s (price %s + commission %s); balance is %s",
			id, total, o.Price, commission, users[customerID].balance)
	}
	switch {
	case refusal != nil && !settled:
		return Order{}, refusal
	case refusal == nil && settled && money.Kopecks(sqlCommission) == commission:
		o.Status = Completed
		return o, nil
	default:
		// Cannot happen while the SQL and Go checks agree; if they ever do not, say so loudly.
		return Order{}, fmt.Errorf("accept of order %d: Go refusal %v but SQL settled=%t (commission %d, Go %d)",
			id, refusal, settled, sqlCommission, commission)
	}
}
