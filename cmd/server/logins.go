package main

import (
	"time"

	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// loginLimits is the failed-login limit of surface's password logins, whose refusals the metrics
// count.
func (a *app) loginLimits(surface string) throttle.Options {
	l := a.cfg.Logins
	return throttle.Options{AddressMax: l.AddressMax, AddressInterval: l.AddressInterval, OnBlocked: a.metrics.LoginRefused(surface)}
}

// sweepIdempotencyKeys deletes expired Idempotency-Key rows hourly, as the tokens' (the surfaces
// that take the header keep them: impl/kit/idempotency).
func (a *app) sweepIdempotencyKeys() {
	a.onClose(sweep.Start(a.log, "idempotency keys", time.Hour, idempotency.New(a.pool, nil, idempotency.Options{}).Sweep))
}

// sweepLoginThrottles deletes the login_throttle rows whose window ended, for every limiter over
// the table (the surfaces' failed logins and sign-ups, the auth confirmation limits).
func (a *app) sweepLoginThrottles() {
	a.onClose(sweep.Start(a.log, "login throttles", throttle.SweepEvery, throttle.New(a.pool, throttle.Options{}).Sweep))
}
