package main

import (
	"time"

	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/sweep"
	"github.com/triadhq/triad/impl/throttle"
)

// passwordLogins is what a surface with password logins gets from the server: its own hasher,
// whose queue the metrics watch, and the failed-login limit with throttle's defaults (10 failures
// per account and client address and 100 per client address in 15 minutes, shared by replicas in
// PostgreSQL; see the surface's docs), whose refusals the metrics count.
func (a *app) passwordLogins(surface string) (*password.Hasher, throttle.Options) {
	hasher := password.New(password.Default)
	a.metrics.WatchHashQueue(surface, hasher.Waiting)
	return hasher, throttle.Options{OnBlocked: a.metrics.LoginRefused(surface)}
}

// sweepTokens deletes a surface's expired access tokens every hour until shutdown. Expired tokens
// authenticate nobody already; the sweep only keeps the table small.
func (a *app) sweepTokens(surface string, f sweep.Func) {
	a.onClose(sweep.Start(a.log, surface+" tokens", time.Hour, f))
}
