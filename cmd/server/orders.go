package main

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/platform/sweep"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/surfaces/orders/devdata"
	"github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// mountOrders mounts the orders API (/oauth/token, /users, /authenticated, /orders) and, in dev
// mode, loads its demo data once.
func (a *app) mountOrders(r chi.Router) error {
	hasher, logins, signups := a.passwordLogins("orders")
	api, err := httpapi.New(a.pool, httpapi.Options{
		Options: tokenedge.Options{
			Hasher:          hasher,
			TokenTTL:        a.cfg.Orders.TokenTTL,
			Log:             a.log,
			Logins:          logins,
			Signups:         signups,
			Revocations:     a.revocations,
			IdempotencyHold: a.idempotencyHold(),
			Reads:           a.reads,
		},
		ClientID:     a.cfg.Orders.ClientID,
		ClientSecret: string(a.cfg.Orders.ClientSecret),
		Limits: orders.Limits{MaxHeld: a.cfg.Orders.MaxHeld, RetakeCooldown: a.cfg.Orders.RetakeCooldown,
			ListShare: a.cfg.Orders.ListShare, ListTimeout: a.cfg.Orders.ListTimeout},
	})
	if err != nil {
		return err
	}
	if a.cfg.IsDev() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		created, err := devdata.Load(ctx, a.pool, api.Service())
		cancel()
		if err != nil {
			return err
		}
		if created {
			a.log.Info("orders: loaded dev data (demo users alice, carol, bob, dave; see docs/orders.md)")
		}
	}
	a.sweepTokens("orders", api.Tokens().Sweep)
	a.tokens.Provide("orders", api.Edge().Source())
	// Every replica sweeps; each stale order moves once (the statement skips rows another holds,
	// an acceptance refuses an order no longer READY).
	timeout, ready := a.cfg.Orders.InProgressTimeout, a.cfg.Orders.ReadyTimeout
	a.onClose(sweep.Start(a.log, "orders in progress", staleSweepEvery(timeout), func(ctx context.Context) (int64, error) {
		return api.Service().ExpireStale(ctx, timeout)
	}))
	a.onClose(sweep.Start(a.log, "orders ready unanswered", staleSweepEvery(ready), func(ctx context.Context) (int64, error) {
		return api.Service().AcceptStale(ctx, ready)
	}))
	a.onClose(sweep.Start(a.log, "order cool-downs", time.Hour, api.Service().SweepCooldowns))
	return api.Mount(r)
}

// staleSweepEvery is how often the stale-order sweep runs for a timeout: a quarter of it, so an
// order returns at most a quarter late, and at least once a minute (the sweep is one indexed
// statement that usually finds nothing).
func staleSweepEvery(timeout time.Duration) time.Duration {
	return min(timeout/4, time.Minute)
}
