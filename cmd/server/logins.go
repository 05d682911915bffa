package main

import (
	"time"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// passwordLogins is what a surface with password logins gets from the server: its own hasher,
// whose queue the metrics watch, with LOGIN_CLIENT_QUEUE; the failed-login limit (10 failures per
// account and client address in 15 minutes, then 429; past LOGIN_ADDRESS_MAX per client address
// its checks are spaced LOGIN_ADDRESS_INTERVAL apart; shared by replicas in PostgreSQL; see the
// surface's docs), whose refusals the metrics count; and the registration cap (SIGNUP_MAX per
// SIGNUP_WINDOW per client address).
func (a *app) passwordLogins(surface string) (hasher *password.Hasher, logins, signups throttle.Options) {
	hasher = password.New(password.Default)
	hasher.SetClientLine(a.cfg.Logins.ClientQueue)
	a.metrics.WatchHashQueue(surface, hasher.Waiting)
	l := a.cfg.Logins
	return hasher, a.loginLimits(surface), throttle.Options{Max: l.SignupMax, Window: l.SignupWindow}
}

// loginLimits is the failed-login limit of surface's password logins, whose refusals the metrics
// count.
func (a *app) loginLimits(surface string) throttle.Options {
	l := a.cfg.Logins
	return throttle.Options{AddressMax: l.AddressMax, AddressInterval: l.AddressInterval, OnBlocked: a.metrics.LoginRefused(surface)}
}

// sweepTokens deletes a surface's expired access tokens every hour until shutdown. Expired tokens
// authenticate nobody already; the sweep only keeps the table small.
func (a *app) sweepTokens(surface string, f sweep.Func) {
	a.onClose(sweep.Start(a.log, surface+" tokens", time.Hour, f))
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
