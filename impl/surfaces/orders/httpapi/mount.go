package httpapi

import (
	"context"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/surfaces/orders/devdata"
)

// Settings are the orders surface's own settings. cmd/server's configuration holds them as they
// are (Config.Orders), each field set by its row of the settings table (ORDERS_*, in
// cmd/server/settings.go), so a setting is typed here and nowhere else.
type Settings struct {
	// ClientID (ORDERS_CLIENT_ID) and ClientSecret (ORDERS_CLIENT_SECRET) authenticate the one
	// OAuth client of the token endpoint.
	ClientID     string
	ClientSecret kit.Secret
	// TokenTTL (ORDERS_TOKEN_TTL) is the access tokens' lifetime; 0 uses orders.DefaultTokenTTL.
	TokenTTL time.Duration
	// Limits bound what one user may hold and how lists are read: ORDERS_MAX_HELD (formerly
	// ORDERS_MAX_IN_PROGRESS), ORDERS_RETAKE_COOLDOWN, ORDERS_LIST_SHARE, ORDERS_LIST_TIMEOUT,
	// ORDERS_WRITE_SHARE.
	Limits orders.Limits
	// InProgressTimeout (ORDERS_IN_PROGRESS_TIMEOUT) is how long an order may stay IN PROGRESS
	// untouched before it returns to WAITING; ReadyTimeout (ORDERS_READY_TIMEOUT) how long it may
	// stay READY unanswered before the server accepts it.
	InProgressTimeout, ReadyTimeout time.Duration
}

// DefaultSettings are the settings the surface takes when its server sets nothing (the orders
// package's defaults, InProgressTimeout 72 hours), but the client, which has no default.
func DefaultSettings() Settings {
	return Settings{TokenTTL: orders.DefaultTokenTTL,
		Limits:            orders.Limits{MaxHeld: orders.DefaultMaxHeld, RetakeCooldown: orders.DefaultRetakeCooldown, ListTimeout: orders.DefaultListTimeout},
		InProgressTimeout: DefaultInProgressTimeout, ReadyTimeout: orders.DefaultReadyTimeout}
}

// DefaultInProgressTimeout is how long an order may stay IN PROGRESS untouched before it returns
// to WAITING, unless configured otherwise.
const DefaultInProgressTimeout = 72 * time.Hour

// Mount is the orders surface as the server mounts it (/oauth/token, /users, /authenticated,
// /orders): the API on the server's Deps, its demo data once in dev mode (and its reset, for the
// server's POST /dev/reset), its tokens as the token source "orders", and its sweeps (expired
// tokens, stale orders, cool-downs).
func Mount(s Settings) kit.Mount {
	return func(d kit.Deps, r chi.Router) error {
		api, err := New(d.Pool, Options{Options: tokenedge.OptionsOf(d, s.TokenTTL),
			ClientID: s.ClientID, ClientSecret: string(s.ClientSecret), Limits: s.Limits})
		if err != nil {
			return err
		}
		api.events = d.Metrics.Events("triad_orders_events_total",
			"Orders created and accepted by their customers, accepted by the sweep after going unanswered (auto_accepted), and returned to WAITING after going untouched IN PROGRESS (expired), by event.",
			"event", EventCreated, EventAccepted, EventAutoAccepted, EventExpired)
		if d.Dev {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			created, err := devdata.Load(ctx, d.Pool, api.Service())
			cancel()
			if err != nil {
				return err
			}
			if created {
				d.Log.Info("orders: loaded dev data (demo users alice, carol, bob, dave; see docs/orders.md)")
			}
			if d.DevReset != nil {
				d.DevReset("orders", func(ctx context.Context) error { return devdata.Reset(ctx, d.Pool, api.Service()) })
			}
		}
		api.edge.Serve(d)
		// The sweep leader sweeps (one replica at a time: impl/platform/sweep's Leader); each stale
		// order moves once anyway (the statement skips rows another holds, an acceptance refuses an
		// order no longer READY). The ledger's partitions are made months ahead of need.
		if d.Sweep != nil {
			d.Sweep("ledger partitions", time.Hour, api.svc.MaintainLedger)
			d.Sweep("orders in progress", staleSweepEvery(s.InProgressTimeout), func(ctx context.Context) (int64, error) {
				n, err := api.svc.ExpireStale(ctx, s.InProgressTimeout)
				api.events.Add(EventExpired, n)
				return n, err
			})
			d.Sweep("orders ready unanswered", staleSweepEvery(s.ReadyTimeout), func(ctx context.Context) (int64, error) {
				n, err := api.svc.AcceptStale(ctx, s.ReadyTimeout)
				api.events.Add(EventAutoAccepted, n)
				return n, err
			})
			d.Sweep("order cool-downs", time.Hour, api.svc.SweepCooldowns)
		}
		return api.Mount(r)
	}
}

// staleSweepEvery is how often the stale-order sweep runs for a timeout: a quarter of it, so an
// order returns at most a quarter late, and at least once a minute (the sweep is one indexed
// statement that usually finds nothing).
func staleSweepEvery(timeout time.Duration) time.Duration {
	return min(timeout/4, time.Minute)
}
