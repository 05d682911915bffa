// Package orders is the domain of the orders API: users with a role and a balance, orders moving
// through WAITING → IN PROGRESS → READY → COMPLETED (or WAITING → CANCELLED, and back to WAITING by release, rejection or expiry), and the payment on acceptance. It enforces the
// role rules and keeps money exact and consistent under concurrency; it knows nothing of HTTP.
package orders

import (
	"errors"
	"fmt"
	"time"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// UserType is an account's single role.
type UserType string

// The two roles.
const (
	Customer  UserType = "Customer"
	Performer UserType = "Performer"
)

// Valid reports whether t is one of the two roles.
func (t UserType) Valid() bool { return t == Customer || t == Performer }

// InitialBalance is what a new account starts with: 500 rubles for a customer, 300 for a performer.
func InitialBalance(t UserType) money.Kopecks {
	if t == Customer {
		return money.Rubles(500)
	}
	return money.Rubles(300)
}

// Status is an order's state.
type Status string

// The states of an order, spelled as the seed spells them (with a space in IN PROGRESS), in the
// database and on the wire alike. An order moves WAITING → IN PROGRESS → READY → COMPLETED; its
// customer may cancel it while WAITING (→ CANCELLED) and reject it while READY (→ WAITING); its
// performer may release it while IN PROGRESS (→ WAITING). docs/orders.md has the whole table.
const (
	Waiting    Status = "WAITING"
	InProgress Status = "IN PROGRESS"
	Ready      Status = "READY"
	Completed  Status = "COMPLETED"
	Cancelled  Status = "CANCELLED"
)

// User is an account of the orders API. The password hash never leaves the package.
type User struct {
	ID       int64
	Username string
	Type     UserType
	Balance  money.Kopecks
}

// Principal is the authenticated caller of a request.
type Principal struct {
	ID       int64
	Username string
	Type     UserType
}

// Order is an order as callers see it.
type Order struct {
	ID            int64
	CustomerID    int64
	PerformerID   int64 // 0 while WAITING
	PerformerName string
	Description   string
	Price         money.Kopecks
	Status        Status
	CreatedAt     time.Time
}

// Sentinel errors: handlers map each to one HTTP status with errors.Is. The refusals every domain
// shares (not found, forbidden, invalid credentials, a name taken) are domainerr's.
var (
	// ErrInvalidInput is a value outside the domain's bounds (400); the error is an
	// invalid.Problems listing each (the shared invalid.ErrInput).
	ErrInvalidInput = invalid.ErrInput
	// ErrInvalidState is a transition from the wrong state (409).
	ErrInvalidState = errors.New("invalid state")
	// ErrInsufficientFunds is an order its customer cannot pay for (409): a create beyond the
	// free balance, or the acceptance of an order from before reservations; nothing moved.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrTooManyHeld is a take by a performer who already holds Limits.MaxHeld orders, IN
	// PROGRESS and READY (409); nothing moved.
	ErrTooManyHeld = errors.New("too many orders held")
	// ErrCoolingDown is a take of an order by the performer it was rejected by, or that released
	// it or let it expire, within Limits.RetakeCooldown (409); nothing moved.
	ErrCoolingDown = errors.New("order cooling down for this performer")
	// ErrListTooSlow is a page whose query ran past Limits.ListTimeout and was cancelled (503,
	// retry shortly); nothing is wrong with the request.
	ErrListTooSlow = errors.New("list query too slow")
	// ErrTooManyAtOnce is a write or an own-account read of a user who already has
	// Limits.WriteShare of them running and a full line waiting in this process (429, retry
	// shortly); nothing was read or changed.
	ErrTooManyAtOnce = errors.New("too many requests of this user at once")
)

// Refusal is a domain error with a message fit for the caller. It wraps one of the sentinels.
// Refused input is not a Refusal but invalid.Problems, every domain's one field-problem error.
type Refusal struct {
	Kind error
	Msg  string
}

// Error is the message for the caller.
func (r *Refusal) Error() string { return r.Msg }

// Unwrap lets errors.Is match the sentinel.
func (r *Refusal) Unwrap() error { return r.Kind }

// JoinInvalid gathers the input refusals among errs (each nil or invalid.Problems) into one
// invalid.Problems, or nil when there is none. An error of any other kind wins over them all and
// is returned as it is.
func JoinInvalid(errs ...error) error {
	var all invalid.Problems
	for _, err := range errs {
		switch e := err.(type) {
		case nil:
		case invalid.Problems:
			all = append(all, e...)
		default:
			return err
		}
	}
	if len(all) == 0 {
		return nil
	}
	return all
}

func refuse(kind error, format string, args ...any) error {
	return &Refusal{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// InvalidInput is the input refusal of one detail.
func InvalidInput(d invalid.Detail) error { return invalid.Problems{d} }
