package main

import (
	"strings"
	"time"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// loginLimits is the failed-login limit of surface's password logins, whose refusals the metrics
// count.
func (a *app) loginLimits(surface string) throttle.Options {
	l := a.cfg.Logins
	return throttle.Options{AddressMax: l.AddressMax, AccountMax: l.AccountMax, AddressInterval: l.AddressInterval, OnBlocked: a.metrics.LoginRefused(surface)}
}

// deviceSigner signs the device tokens of surface's password logins (OWASP's device cookies,
// impl/credentials/device), keyed by AUTH_SECRET, which every replica shares: a key of its own per
// surface is derived from it, so the secret itself signs nothing and one surface's token is nothing
// on another.
func (a *app) deviceSigner(surface string) *device.Signer {
	return device.NewSigner([]byte(a.cfg.Auth.Secret), surface, 0, nil)
}

// secureCookies reports whether cookies are to be marked Secure: asked for, or the public URL is
// https (the browser then always talks TLS), as the auth surface decides for its own.
func secureCookies(c AuthConfig) bool {
	return c.SecureCookies || strings.HasPrefix(strings.ToLower(c.URL), "https://")
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
