package main

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
)

// mountBrands mounts the brands API (/api/...). In dev mode it loads the prepared brands, admin and
// demo user (see docs/brands.md); in any mode BRANDS_ADMIN_EMAIL/BRANDS_ADMIN_PASSWORD create the first
// admin, or take over the non-admin account holding that email (see brands.Service.EnsureAdmin).
func (a *app) mountBrands(r chi.Router) error {
	hasher, logins, signups := a.passwordLogins("brands")
	api, err := httpapi.New(a.pool, httpapi.Options{
		Hasher:          hasher,
		TokenTTL:        a.cfg.Brands.TokenTTL,
		Log:             a.log,
		Logins:          logins,
		Signups:         signups,
		Revocations:     a.revocations,
		IdempotencyHold: a.idempotencyHold(),
		Reads:           a.reads,
	})
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
	a.sweepTokens("brands", api.Tokens().Sweep)
	a.tokens.Provide("brands", api.Edge().Source())
	return api.Mount(r)
}
