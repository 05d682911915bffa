package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/cors"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/platform/sweep"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatarstore"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/pgshared"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/sender"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Demo credentials of the direct provider "local" in dev mode (documented in docs/auth.md).
const (
	devDirectProvider = "local"
	devDirectUser     = "demo"
	devDirectPassword = "demo-password"
)

// mountAuth is the reference wiring of the auth library: the auth handler at /auth (with the
// login demo page at /auth/), the avatar handler at /avatar. Dev mode adds the dev OAuth2 provider
// and a direct provider with demo credentials; prod mode enables the providers of AUTH_PROVIDERS.
func (a *app) mountAuth(_ kit.Deps, r chi.Router) error {
	// Without AUTH_AVATAR_STORE avatars live in the server's own database (table avatars), which
	// every replica shares and which leaves no files behind.
	store, err := avatarstore.Open(context.Background(), string(a.cfg.Auth.AvatarStore), avatarstore.Options{Pool: a.pool, Reads: a.reads})
	if err != nil {
		return fmt.Errorf("avatar store: %w", err)
	}
	a.onClose(func() {
		if err := store.Close(); err != nil {
			a.log.Warn("avatar store: close", "err", err)
		}
	})
	// Single-use confirmations and Telegram logins live in the server's database, so every replica
	// sees the same state; one replica at a time polls the bot.
	// The tables are the server's migrations' (db/schema/00040_auth_state.sql): nothing is created
	// at start, so a role that may only read and write rows runs the server.
	st := pgstate.Open(a.pool)
	a.onClose(sweep.Start(a.log, "auth used ids and messenger logins", pgstate.SweepEvery, st.Sweep))
	// Sessions ended by logout are rows too (00210_auth_revoked_sessions.sql), held in memory by
	// every replica and pushed to the others through the process's token revocation listener;
	// while it is down, each replica reads new ones every half second.
	sess := pgstate.NewSessions(a.pool, a.log.With("surface", "auth"))
	opaquetoken.WatchCache(a.revocations, pgstate.SessionsChannel, sess)
	a.onClose(sess.Start())
	c := a.cfg.Auth
	svc, err := newAuthService(a.cfg, a.log, store, pgshared.New(a.pool, st, pgshared.Options{Direct: a.direct, Log: a.log,
		Logins: a.loginLimits("auth"), Devices: a.deviceSigner("auth"), Sessions: sess,
		ConfirmPerRecipient: c.ConfirmPerRecipient, ConfirmPerClient: c.ConfirmPerClient, ConfirmWindow: c.ConfirmWindow}))
	if err != nil {
		return err
	}
	a.tokens.Provide("auth", authTokenSource(svc.Middleware()))
	a.onClose(func() {
		if err := svc.Close(); err != nil {
			a.log.Warn("auth: close", "err", err)
		}
	})
	spec, err := authapi.GetSpec()
	if err != nil {
		return err
	}
	authH, avatarH := svc.Handlers()
	// The spec fixes every /auth and /avatar route, so requests are validated against it before the
	// library sees them, except the session reads of authUnvalidated. One validator (one router
	// built from the spec) serves both mounts.
	if err := router.Group(r, router.Surface{Spec: spec, Validate: authValidated}, func(g chi.Router) {
		g.Mount("/auth", authH)
		g.Mount("/avatar", avatarH)
	}); err != nil {
		return err
	}
	a.log.Info("auth: providers", "providers", svc.Providers())
	return nil
}

// authUnvalidated lists the auth routes (all GET) served past the spec validator: the hot path of
// every page load, whose only input is the token (verified by the library) and the X-XSRF-TOKEN
// header, whose length the library checks itself with the same 400 (impl/surfaces/auth's bound test ties it
// to the spec). Routing them past kin-openapi keeps /auth/user near a bare token parse under load
// (make bench); TestAuthUnvalidated_TakeNoOtherInput holds each against the spec.
var authUnvalidated = []string{"/auth/user", "/auth/status", "/auth/list"}

// authValidated is the auth surface's router.Surface.Validate: every request but the GETs of
// authUnvalidated.
func authValidated(r *http.Request) bool {
	return r.Method != http.MethodGet || !slices.Contains(authUnvalidated, r.URL.Path)
}

// newAuthService builds the auth service from the config, with the demo login page at /auth/.
func newAuthService(cfg Config, log *slog.Logger, store avatar.Store, shared *pgshared.State) (*auth.Service, error) {
	c := cfg.Auth
	secret := string(c.Secret)
	opts := auth.Options{
		SecretReader:      token.SecretFunc(func(string) (string, error) { return secret, nil }),
		TokenDuration:     c.TokenDuration,
		CookieDuration:    c.CookieDuration,
		Issuer:            c.Issuer,
		URL:               c.URL,
		AvatarStore:       store,
		AvatarResizeLimit: c.AvatarResize,
		Audiences:         splitList(c.Audiences),
		AdminPasswd:       string(c.AdminPasswd),
		Logger:            logger.FromSlog(log.With("surface", "auth")),
		// An https public URL means the browser always talks TLS: mark the cookies Secure then too.
		SecureCookies:        c.SecureCookies || strings.HasPrefix(strings.ToLower(c.URL), "https://"),
		AllowedRedirectHosts: redirectHosts(cfg),
		JWTCookieDomain:      c.CookieDomain,
		LoginPage:            true,
		UsedIDs:              shared.UsedIDs(),
		SendLimiter:          shared.SendLimiter(),
		LoginGuard:           shared.LoginGuard(),
		Sessions:             shared.Sessions(),
		HTTPClient:           c.ProviderSettings.httpClient(),
	}
	if cfg.IsDev() {
		opts.LoginPageDirect = devDirectProvider
	}
	svc, err := auth.New(opts)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*auth.Service, error) {
		_ = svc.Close()
		return nil, err
	}
	if cfg.IsDev() {
		port := c.DevPort
		// A server on an ephemeral port (tests) gets an ephemeral dev provider too, so parallel
		// servers never fight over 8084.
		if _, p, err := net.SplitHostPort(cfg.Addr); err == nil && p == "0" {
			port = 0
		}
		// ExampleCallback: the callbacks' example in api/auth.yaml completes a login (Swagger UI's
		// Try it out; docs/specs.md).
		if err := svc.AddDevProviderOpts(provider.DevOpts{Port: port, Share: true, ExampleCallback: true,
			EmailFn: func(u string) string { return u + "@example.com" }}); err != nil {
			return fail(err)
		}
		if err := svc.AddDirectProvider(devDirectProvider, provider.CredCheckerFunc(func(user, passwd string) (bool, error) {
			return user == devDirectUser && passwd == devDirectPassword, nil
		})); err != nil {
			return fail(err)
		}
	}
	for _, p := range splitList(string(c.Providers)) {
		name, rest, _ := strings.Cut(p, ":")
		cid, csecret, _ := strings.Cut(rest, ":")
		if name == provider.DevName && !cfg.IsDev() {
			return fail(errors.New("AUTH_PROVIDERS: the dev provider is for development only"))
		}
		if err := svc.AddProvider(name, cid, csecret); err != nil {
			return fail(fmt.Errorf("AUTH_PROVIDERS: %w", err))
		}
	}
	if c.SMTPHost != "" {
		if c.SMTPFrom == "" {
			return fail(errors.New("AUTH_SMTP_HOST needs AUTH_SMTP_FROM"))
		}
		email := sender.NewEmail(sender.EmailParams{Host: c.SMTPHost, Port: c.SMTPPort, SMTPUserName: c.SMTPUser,
			SMTPPassword: string(c.SMTPPassword), StartTLS: c.SMTPStartTLS, From: c.SMTPFrom}, logger.FromSlog(log.With("surface", "auth")))
		if err := svc.AddVerifProvider("email", emailTemplate, email); err != nil {
			return fail(err)
		}
	}
	// Providers with their own settings (AUTH_<NAME>_CID, Apple, Telegram, custom): auth_providers.go.
	if err := addConfiguredProviders(context.Background(), cfg, svc, shared); err != nil {
		return fail(err)
	}
	if len(svc.Providers()) == 0 {
		log.Warn("auth: no login provider configured (set AUTH_PROVIDERS)")
	}
	return svc, nil
}

// redirectHosts are the origins besides AUTH_URL's that a login's `from` may send the browser to:
// AUTH_ALLOWED_HOSTS, plus in dev mode the local dev-server origins CORS already admits there, so a
// single-page app on its dev server (Vite's localhost:5173, ...) gets its user back after a login
// instead of the JSON answer. Prod mode admits only what the operator listed (deny by default).
func redirectHosts(cfg Config) []string {
	hosts := splitList(cfg.Auth.AllowedHosts)
	if cfg.IsDev() {
		hosts = append(hosts, cors.DevOrigins()...)
	}
	return hosts
}

// emailTemplate is the confirmation message of the "email" verified provider.
const emailTemplate = `<p>Hello {{.User}},</p>
<p>Confirm your login to {{.Site}} with this token:</p>
<pre>{{.Token}}</pre>
<p>It works once, within 15 minutes. If you did not ask for it, ignore this message.</p>`

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
