// Package devdata loads the brands API's prepared data in dev mode: twelve brands (five featured, two
// unavailable), an admin and a demo user subscribed to two brands. Loading is idempotent: brands
// have fixed ids and are inserted only when missing, users only when their email is free. Reset
// puts it back as at the first start (dev mode's POST /dev/reset).
package devdata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// Demo credentials, documented in docs/brands.md. Dev mode only. The hashes are the argon2id hashes
// of the passwords (password.Default's cost, fixed salts), computed once and stored here, so that
// a dev start creates the users without hashing (most of a second per hash under -race);
// TestHashes_ArePublishedPasswords holds each to its password.
const (
	AdminEmail    = "admin@brands.test"
	AdminPassword = "admin-password"
	AdminHash     = "$argon2id$v=19$m=19456,t=2,p=1$FprRWcbTx9qImhUC0UvKVA$U7cA9Qd7/eDD1I7mytWTFkh8xO2/AnXDdT7cM6eDRaY"
	DemoEmail     = "demo@brands.test"
	DemoPassword  = "demo-password"
	DemoHash      = "$argon2id$v=19$m=19456,t=2,p=1$tAGfLFP5F2dMSnsmhYJjoQ$RAf7WeYt8QKkHQt1K47fKUgBZL3ijavKn9ht9lX1AKw"
)

// Brand is one prepared brand.
type Brand struct {
	ID, Name, Description, URL, Image string
	Available, Featured               bool
	Products                          []map[string]any
}

func p(name string, price float64) map[string]any {
	return map[string]any{"name": name, "price": price}
}

// Brands are the prepared brands, in creation order.
var Brands = []Brand{
	{"655e1f2a0000000000000001", "Northwind Coffee", "Single-origin beans roasted to order.", "https://northwind.example.com", "https://images.example.com/northwind.jpg", true, true, []map[string]any{p("House blend", 12.5), p("Ethiopia Yirgacheffe", 16)}},
	{"655e1f2a0000000000000002", "Fjord Outdoor", "Rain shells and wool layers for wet climates.", "https://fjord.example.com", "https://images.example.com/fjord.jpg", true, true, []map[string]any{p("Storm shell", 249), p("Merino base layer", 89)}},
	{"655e1f2a0000000000000003", "Lumen Lighting", "Warm LED lamps designed to be repaired.", "https://lumen.example.com", "https://images.example.com/lumen.jpg", true, true, []map[string]any{p("Desk lamp", 129)}},
	{"655e1f2a0000000000000004", "Tessera Tiles", "Hand-glazed ceramic tiles.", "https://tessera.example.com", "https://images.example.com/tessera.jpg", true, false, []map[string]any{p("Sample box", 25)}},
	{"655e1f2a0000000000000005", "Orbit Bikes", "Steel-frame city bicycles.", "https://orbit.example.com", "https://images.example.com/orbit.jpg", true, false, []map[string]any{p("Commuter", 899), p("Cargo", 1899)}},
	{"655e1f2a0000000000000006", "Saltmarsh Soap", "Cold-process soaps with sea salt.", "https://saltmarsh.example.com", "https://images.example.com/saltmarsh.jpg", true, false, []map[string]any{}},
	{"655e1f2a0000000000000007", "Quill & Co", "Fountain pens and bottled inks.", "https://quill.example.com", "https://images.example.com/quill.jpg", true, true, []map[string]any{p("Steel nib pen", 45), p("Ink, 50 ml", 14)}},
	{"655e1f2a0000000000000008", "Harbor Tea", "Loose-leaf teas, blended weekly.", "https://harbor.example.com", "https://images.example.com/harbor.jpg", true, false, []map[string]any{p("Breakfast blend", 9)}},
	{"655e1f2a0000000000000009", "Pixel Press", "Risograph prints by independent artists.", "https://pixelpress.example.com", "https://images.example.com/pixelpress.jpg", true, false, []map[string]any{p("A3 print", 35)}},
	{"655e1f2a000000000000000a", "Granite Kitchen", "Cast-iron cookware made to last.", "https://granite.example.com", "https://images.example.com/granite.jpg", true, false, []map[string]any{p("Skillet 26 cm", 79)}},
	{"655e1f2a000000000000000b", "Velvet Records", "A record label on hiatus.", "https://velvet.example.com", "https://images.example.com/velvet.jpg", false, false, []map[string]any{}},
	{"655e1f2a000000000000000c", "Aurora Skis", "Touring skis; sold out until next season.", "https://aurora.example.com", "https://images.example.com/aurora.jpg", false, true, []map[string]any{p("Tour 88", 649)}},
}

// demoSubscriptions are the brands the demo user starts subscribed to.
var demoSubscriptions = []string{"655e1f2a0000000000000001", "655e1f2a0000000000000004"}

// Load inserts whatever of the prepared data is missing. It reports whether it created anything.
func Load(ctx context.Context, pool *pgxpool.Pool, svc *brands.Service) (bool, error) {
	q := db.New(pool)
	for _, b := range Brands {
		products, err := json.Marshal(b.Products)
		if err != nil {
			return false, err
		}
		if err := q.UpsertBrandFixture(ctx, db.UpsertBrandFixtureParams{
			ID: b.ID, Name: b.Name, Description: b.Description, Url: b.URL, FeaturedImage: b.Image,
			Availability: b.Available, IsFeatured: b.Featured, Products: products,
		}); err != nil {
			return false, fmt.Errorf("brands dev data: brand %s: %w", b.ID, err)
		}
	}
	created, err := svc.EnsureAdminWithHash(ctx, AdminEmail, "Brands Admin", AdminHash)
	if err != nil {
		return false, fmt.Errorf("brands dev data: admin: %w", err)
	}
	demo, err := svc.RegisterWithHash(ctx, "Demo User", DemoEmail, DemoHash)
	switch {
	case errors.Is(err, domainerr.Taken):
		return created, nil
	case err != nil:
		return false, fmt.Errorf("brands dev data: demo user: %w", err)
	}
	for _, id := range demoSubscriptions {
		if _, err := q.SubscribeBrand(ctx, db.SubscribeBrandParams{UserID: demo.ID, BrandID: id}); err != nil {
			return false, fmt.Errorf("brands dev data: demo subscription: %w", err)
		}
	}
	return true, nil
}

// Reset puts the demo data back as Load made it on an empty database: every brand, user, token and
// subscription of the brands API is removed, with every remembered Idempotency-Key answer, and
// Load runs again (the prepared brands under their fixed ids, the admin and the demo user with
// their published passwords). Tokens issued before are refused from then on, on every replica.
// Dev mode only (POST /dev/reset): it destroys what every visitor did.
func Reset(ctx context.Context, pool *pgxpool.Pool, svc *brands.Service) error {
	err := pgtx.Run(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.ResetBrandsData(ctx); err != nil {
			return err
		}
		return q.DeleteAllIdempotencyKeys(ctx)
	})
	if err != nil {
		return fmt.Errorf("brands dev data: reset: %w", err)
	}
	_, err = Load(ctx, pool, svc)
	return err
}
