// Package httpapi is the auth surface as triad's server mounts it (/auth, /avatar): the reference
// wiring of the embeddable auth library (impl/surfaces/auth) on the server's kit.Deps, from plain
// settings. It keeps the library's shared state in the server's database (pgstate, pgshared),
// registers the configured login providers, validates requests against api/auth.yaml and makes
// the auth JWT the token source "auth". An embedder of the library needs none of it.
package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatarstore"
	"github.com/triadhq/triad/impl/surfaces/auth/middleware"
	"github.com/triadhq/triad/impl/surfaces/auth/pgshared"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// Settings are the auth surface's own settings. cmd/server's configuration holds them as they are
// (Config.Auth), each field set by its row of the settings table (AUTH_*, in
// cmd/server/settings.go), so a setting is typed here and nowhere else; secrets are kit.Secret,
// masked wherever the configuration is logged. Whether cookies are Secure is the server's
// (kit.Deps.SecureCookies), dev mode too (kit.Deps.Dev).
type Settings struct {
	// Secret signs the JWTs (AUTH_SECRET).
	Secret kit.Secret
	// URL is the public base URL: callbacks and avatar links (AUTH_URL).
	URL string
	// Issuer is the JWT iss (AUTH_ISSUER).
	Issuer string
	// TokenDuration is the JWT's lifetime, CookieDuration the cookie's.
	TokenDuration, CookieDuration time.Duration
	// CookieDomain is the Domain of the JWT and XSRF cookies; empty keeps them host-only.
	CookieDomain string
	// AllowedHosts are the origins besides URL's a login's `from` may point at (AUTH_ALLOWED_HOSTS).
	AllowedHosts []string
	// AvatarStore is the avatar store's URI (avatarstore.Open); empty keeps avatars in the
	// server's database (AUTH_AVATAR_STORE).
	AvatarStore kit.CredURI
	// AvatarResize is the avatar resize limit in pixels; 0 keeps the size.
	AvatarResize int
	// DevPort is the dev OAuth2 server's port in dev mode; 0 picks a free one (as cmd/server does
	// for a server on an ephemeral port, so parallel servers never fight over one).
	DevPort int
	// AdminPasswd enables basic auth for the user admin (AUTH_ADMIN_PASSWD).
	AdminPasswd kit.Secret
	// Builtins are built-in OAuth providers as name:cid:csecret (AUTH_PROVIDERS).
	Builtins kit.Secrets
	// Providers enable login providers one by one (providers.go).
	Providers Providers
	// Audiences are the allowed token audiences; empty allows any (AUTH_AUDIENCES).
	Audiences []string
	// SMTP, with a host, enables the verified provider "email" (AUTH_SMTP_*).
	SMTP SMTP
	// ConfirmPerRecipient, ConfirmPerClient and ConfirmWindow bound the verified provider's
	// confirmation messages: to one recipient, and asked by one client address, in each window.
	ConfirmPerRecipient, ConfirmPerClient int
	ConfirmWindow                         time.Duration
}

// SMTP is the mail server of the "email" verified provider.
type SMTP struct {
	Host     string
	Port     int
	User     string
	Password kit.Secret
	From     string
	StartTLS bool
}

// parsedSpec is the generated document, parsed once per process (about 25 ms, ten times that under
// -race) and shared, read-only, by every mount of the surface: web.Validator validates against its
// own copy of what it changes.
var parsedSpec = sync.OnceValues(authapi.GetSpec)

// DefaultSettings are the settings the surface takes when its server sets nothing: the
// confirmation limits of package provider.
func DefaultSettings() Settings {
	return Settings{ConfirmPerRecipient: provider.DefaultSendsPerRecipient, ConfirmPerClient: provider.DefaultSendsPerClient,
		ConfirmWindow: provider.DefaultSendWindow}
}

// Mount is the auth surface as the server mounts it: the auth handler at /auth (with the login
// demo page at /auth/), the avatar handler at /avatar, its JWT as the token source "auth". Dev
// mode adds the dev OAuth2 provider and a direct provider with demo credentials; prod mode enables
// the providers of the settings.
func Mount(s Settings) kit.Mount {
	return func(d kit.Deps, r chi.Router) error {
		if d.Sweep == nil || d.OnClose == nil || d.Logins == nil {
			return errors.New("auth: the server's Deps lack Sweep, OnClose or Logins")
		}
		// Without AvatarStore avatars live in the server's own database (table avatars), which
		// every replica shares and which leaves no files behind.
		store, err := avatarstore.Open(context.Background(), string(s.AvatarStore), avatarstore.Options{Pool: d.Pool, Reads: d.Reads})
		if err != nil {
			return fmt.Errorf("avatar store: %w", err)
		}
		d.OnClose(func() {
			if err := store.Close(); err != nil {
				d.Log.Warn("avatar store: close", "err", err)
			}
		})
		// Single-use confirmations and Telegram logins live in the server's database, so every
		// replica sees the same state; one replica at a time polls the bot.
		// The tables are the server's migrations' (db/schema/00040_auth_state.sql): nothing is
		// created at start, so a role that may only read and write rows runs the server.
		st := pgstate.Open(d.Pool)
		d.Sweep("auth used ids and messenger logins", pgstate.SweepEvery, st.Sweep)
		// Sessions ended by logout are rows too (00210_auth_revoked_sessions.sql), held in memory
		// by every replica and pushed to the others through the process's token revocation
		// listener; while it is down, each replica reads new ones every half second. Each replica
		// forgets the expired ones from memory; the sweep leader deletes their rows.
		sess := pgstate.NewSessions(d.Pool, d.Log)
		opaquetoken.WatchCache(d.Revocations, pgstate.SessionsChannel, sess)
		d.OnClose(sess.StartLed(d.Sweep))
		shared := pgshared.New(d.Pool, st, pgshared.Options{Direct: d.Direct, Log: d.Log,
			Logins: d.Logins(), Devices: d.Devices, DeviceAccounts: deviceAccounts(string(s.AdminPasswd), d.Dev), Sessions: sess,
			ConfirmPerRecipient: s.ConfirmPerRecipient, ConfirmPerClient: s.ConfirmPerClient, ConfirmWindow: s.ConfirmWindow})
		mails := d.Metrics.Events("triad_auth_mails_total", "Confirmation mails of the verified (email) login, by result: sent, or failed (the relay refused or could not be reached).",
			"result", MailSent, MailFailed)
		svc, err := newService(s, d.Dev, d.SecureCookies, d.Log, store, shared, mails)
		if err != nil {
			return err
		}
		d.Tokens.Provide("auth", tokenSource(svc.Middleware()))
		d.OnClose(func() {
			if err := svc.Close(); err != nil {
				d.Log.Warn("auth: close", "err", err)
			}
		})
		doc, err := parsedSpec()
		if err != nil {
			return err
		}
		authH, avatarH := svc.Handlers()
		// The spec fixes every /auth and /avatar route, so requests are validated against it
		// before the library sees them, except the session reads of unvalidated. One validator
		// (one router built from the spec) serves both mounts.
		if err := router.Group(r, router.Surface{Spec: doc, Unvalidated: unvalidated}, func(g chi.Router) {
			g.Mount("/auth", authH)
			g.Mount("/avatar", avatarH)
		}); err != nil {
			return err
		}
		d.Log.Info("auth: providers", "providers", svc.Providers())
		return nil
	}
}

// unvalidated lists, by operation id, the auth operations served past the spec validator
// (router.Surface.Unvalidated), GET /auth/user, /auth/status and /auth/list: the hot path of
// every page load, whose only input is the token (verified by the library) and the X-XSRF-TOKEN
// header, whose length the library checks itself with the same 400 (impl/surfaces/auth's bound
// test ties it to the spec). Routing them past kin-openapi keeps /auth/user near a bare token
// parse under load (make bench); TestUnvalidated_TakeNoOtherInput holds each against the spec.
var unvalidated = map[string]func(*http.Request) bool{"GetAuthUser": always, "GetAuthStatus": always, "ListAuthProviders": always}

func always(*http.Request) bool { return true }

// tokenSource makes the auth service's JWT the token source "auth": a token the auth middleware
// would accept in its header (verified, its session not ended by a logout, of a registered
// provider) becomes a kit.Caller with the user's id and the role "admin" or "user".
func tokenSource(m *middleware.Authenticator) kit.Resolver {
	return func(_ context.Context, tok string) (kit.Caller, error) {
		u, err := m.UserOfToken(tok)
		if errors.Is(err, middleware.ErrUnauthorized) {
			return kit.Caller{}, bearer.ErrInvalid
		}
		if err != nil {
			return kit.Caller{}, err
		}
		role := "user"
		if u.IsAdmin() {
			role = "admin"
		}
		return kit.Caller{Source: "auth", UserID: u.ID, Role: role}, nil
	}
}
