package loginguard

import (
	"context"
	"errors"
	"time"

	"github.com/triadhq/triad/impl/credentials/throttle"
)

// Defaults of the registration cap (Signups), the server's too: 20 accounts per client address per
// hour. A registration mints an account, and on orders a starting balance, so one host registering
// in a loop farms both; 20 an hour is more than an office behind one NAT address signs up.
const (
	DefaultSignupMax    = 20
	DefaultSignupWindow = time.Hour
)

// ErrTooManySignups matches (errors.Is) the *Blocked error of a registration the cap refused.
var ErrTooManySignups = errors.New("too many registrations from this address")

// Signups caps the registrations of one surface per client address, counted in PostgreSQL
// (throttle's table, under SignupKey) so every replica shares the count.
type Signups struct {
	limiter *throttle.Limiter
}

// NewSignups returns the cap of limiter: its Max registrations per client address per Window
// (zero fields of the limiter's options take DefaultSignupMax and DefaultSignupWindow when built
// with SignupOptions).
func NewSignups(limiter *throttle.Limiter) *Signups { return &Signups{limiter: limiter} }

// SignupOptions is o with the registration cap's defaults in its zero Max and Window.
func SignupOptions(o throttle.Options) throttle.Options {
	if o.Max <= 0 {
		o.Max = DefaultSignupMax
	}
	if o.Window <= 0 {
		o.Window = DefaultSignupWindow
	}
	return o
}

// Register runs create, the surface's registration, when the client address remoteAddr
// (http.Request.RemoteAddr) is under its cap, and counts it. It returns a *Blocked
// (ErrTooManySignups) without running create when the address is at its cap; an error of create
// gives the count back (only accounts really created count), as does a database error of the cap
// itself, which is returned.
func (s *Signups) Register(ctx context.Context, remoteAddr string, create func(context.Context) error) error {
	res, err := s.limiter.Reserve(ctx, throttle.SignupKey(remoteAddr))
	if err != nil {
		return err
	}
	if res.Blocked {
		return &Blocked{Seconds: throttle.RetryAfterSeconds(res.RetryAfter), Why: ErrTooManySignups}
	}
	if err := create(ctx); err != nil {
		// Best effort: a count that stays only moves the address's cap nearer.
		_ = res.Release()
		return err
	}
	return nil
}
