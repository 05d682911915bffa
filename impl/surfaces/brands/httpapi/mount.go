package httpapi

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/brands"
	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
)

// Settings are the brands surface's own settings. cmd/server's configuration holds them as they
// are (Config.Brands), each field set by its row of the settings table (BRANDS_*, in
// cmd/server/settings.go), so a setting is typed here and nowhere else.
type Settings struct {
	// TokenTTL (BRANDS_TOKEN_TTL) is the access tokens' lifetime; 0 uses brands.DefaultTokenTTL.
	TokenTTL time.Duration
	// AdminEmail (BRANDS_ADMIN_EMAIL) and AdminPassword (BRANDS_ADMIN_PASSWORD), when the email is
	// set, create the first admin at start, or take over the non-admin account holding that email
	// (brands.Service.EnsureAdmin).
	AdminEmail    string
	AdminPassword kit.Secret
}

// DefaultSettings are the settings the surface takes when its server sets nothing: the brands
// package's token lifetime, no first admin.
func DefaultSettings() Settings {
	return Settings{TokenTTL: brands.DefaultTokenTTL}
}

// Mount is the brands surface as the server mounts it (/api/...): the API on the server's Deps,
// in dev mode the prepared brands, admin and demo user (docs/brands.md) and their reset (for the
// server's POST /dev/reset), the first admin of Settings, and its tokens as the token source
// "brands".
func Mount(s Settings) kit.Mount {
	return func(d kit.Deps, r chi.Router) error {
		api, err := New(d.Pool, tokenedge.OptionsOf(d, s.TokenTTL))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if d.Dev {
			created, err := devdata.Load(ctx, d.Pool, api.Service())
			if err != nil {
				return err
			}
			if created {
				d.Log.Info("brands: loaded dev data (admin " + devdata.AdminEmail + ", demo user " + devdata.DemoEmail + "; see docs/brands.md)")
			}
		}
		ensureAdmin := func(ctx context.Context) error {
			if s.AdminEmail == "" {
				return nil
			}
			changed, err := api.Service().EnsureAdmin(ctx, s.AdminEmail, "Admin", string(s.AdminPassword))
			if err != nil {
				return err
			}
			d.Log.Info("brands: admin ensured", "email", s.AdminEmail, "changed", changed)
			return nil
		}
		if err := ensureAdmin(ctx); err != nil {
			return err
		}
		if d.Dev && d.DevReset != nil {
			// The reset removes every account, the configured admin's too: it is ensured again.
			d.DevReset("brands", func(ctx context.Context) error {
				if err := devdata.Reset(ctx, d.Pool, api.Service()); err != nil {
					return err
				}
				return ensureAdmin(ctx)
			})
		}
		api.edge.Serve(d)
		return api.Mount(r)
	}
}
