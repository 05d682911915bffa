package main

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/orders/devdata"
	"github.com/triadhq/triad/impl/orders/httpapi"
)

// mountOrders mounts the orders API (/oauth/token, /users, /authenticated, /orders) and, in dev
// mode, loads its demo data once.
func (a *app) mountOrders(r chi.Router) error {
	hasher, logins := a.passwordLogins("orders")
	api, err := httpapi.New(a.pool, httpapi.Options{
		Hasher:       hasher,
		ClientID:     a.cfg.Orders.ClientID,
		ClientSecret: string(a.cfg.Orders.ClientSecret),
		TokenTTL:     a.cfg.Orders.TokenTTL,
		Log:          a.log,
		Logins:       logins,
		Revocations:  a.revocations,
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
	return api.Mount(r)
}
