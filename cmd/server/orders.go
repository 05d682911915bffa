package main

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/orders/devdata"
	"github.com/triadhq/triad/impl/orders/httpapi"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/sweep"
	"github.com/triadhq/triad/impl/throttle"
)

// mountOrders mounts the orders API (/oauth/token, /users, /authenticated, /orders) and, in dev
// mode, loads its demo data once.
func (a *app) mountOrders(r chi.Router) error {
	hasher := password.New(password.Default)
	a.metrics.WatchHashQueue("orders", hasher.Waiting)
	api, err := httpapi.New(a.pool, httpapi.Options{
		Hasher:       hasher,
		ClientID:     a.cfg.Orders.ClientID,
		ClientSecret: string(a.cfg.Orders.ClientSecret),
		TokenTTL:     a.cfg.Orders.TokenTTL,
		Log:          a.log,
		// Logins keeps throttle's defaults, 10 failed logins per username and client address and
		// 100 per client address in 15 minutes (shared by replicas in PostgreSQL; see
		// docs/orders.md), and counts refusals.
		Logins: throttle.Options{OnBlocked: a.metrics.LoginRefused("orders")},
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
	// Expired tokens authenticate nobody already; the sweep only keeps the table small.
	a.onClose(sweep.Start(a.log, "orders tokens", time.Hour, api.Tokens().Sweep))
	return api.Mount(r)
}
