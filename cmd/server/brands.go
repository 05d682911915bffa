package main

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/brands/devdata"
	"github.com/triadhq/triad/impl/brands/httpapi"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/sweep"
	"github.com/triadhq/triad/impl/throttle"
)

// mountBrands mounts the brands API (/api/...). In dev mode it loads the prepared brands, admin and
// demo user (see docs/brands.md); in any mode BRANDS_ADMIN_EMAIL/BRANDS_ADMIN_PASSWORD create the first
// admin, or take over the non-admin account holding that email (see brands.Service.EnsureAdmin).
func (a *app) mountBrands(r chi.Router) error {
	hasher := password.New(password.Default)
	a.metrics.WatchHashQueue("brands", hasher.Waiting)
	api, err := httpapi.New(a.pool, httpapi.Options{TokenTTL: a.cfg.Brands.TokenTTL, Log: a.log, Hasher: hasher,
		// Throttle's defaults, 10 failed logins per email and client address and 100 per client
		// address in 15 minutes (shared by replicas in PostgreSQL; see docs/brands.md); refusals
		// are counted in the metrics.
		Logins: throttle.Options{OnBlocked: a.metrics.LoginRefused("brands")}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if a.cfg.IsDev() {
		created, err := devdata.Load(ctx, a.pool, api.Service())
		if err != nil {
			return err
		}
		if created {
			a.log.Info("brands: loaded dev data (admin " + devdata.AdminEmail + ", demo user " + devdata.DemoEmail + "; see docs/brands.md)")
		}
	}
	if a.cfg.Brands.AdminEmail != "" {
		changed, err := api.Service().EnsureAdmin(ctx, a.cfg.Brands.AdminEmail, "Admin", string(a.cfg.Brands.AdminPassword))
		if err != nil {
			return err
		}
		a.log.Info("brands: admin ensured", "email", a.cfg.Brands.AdminEmail, "changed", changed)
	}
	// Expired tokens authenticate nobody already; the sweep only keeps the table small.
	a.onClose(sweep.Start(a.log, "brands tokens", time.Hour, api.Service().SweepExpiredTokens))
	return api.Mount(r)
}
