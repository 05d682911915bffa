package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/kit/cors"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/pgshared"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/sender"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Demo credentials of the direct provider "local" in dev mode (documented in docs/auth.md).
const (
	DevDirectProvider = "local"
	DevDirectUser     = "demo"
	DevDirectPassword = "demo-password"
)

// The results of triad_auth_mails_total.
const (
	MailSent   = "sent"
	MailFailed = "failed"
)

// countedSender counts what its Sender sends and fails to send.
type countedSender struct {
	provider.Sender
	mails metrics.Events
}

func (c countedSender) Send(address, text string) error {
	err := c.Sender.Send(address, text)
	if err != nil {
		c.mails.Add(MailFailed, 1)
	} else {
		c.mails.Add(MailSent, 1)
	}
	return err
}

// CheckAddress is the Sender's own check (provider.AddressChecker), which a wrapper would hide.
func (c countedSender) CheckAddress(address string) error {
	if ac, ok := c.Sender.(provider.AddressChecker); ok {
		return ac.CheckAddress(address)
	}
	return nil
}

// newService builds the auth service from the settings, with the demo login page at /auth/; dev
// is the server's dev mode, secureCookies marks the cookies Secure. shared (nil: in memory) holds
// the state replicas share.
// mails counts the confirmation mails sent and failed.
func newService(s Settings, dev, secureCookies bool, log *slog.Logger, store avatar.Store, shared *pgshared.State, mails metrics.Events) (*auth.Service, error) {
	secret := string(s.Secret)
	opts := auth.Options{
		SecretReader:         token.SecretFunc(func(string) (string, error) { return secret, nil }),
		TokenDuration:        s.TokenDuration,
		CookieDuration:       s.CookieDuration,
		Issuer:               s.Issuer,
		URL:                  s.URL,
		AvatarStore:          store,
		AvatarResizeLimit:    s.AvatarResize,
		Audiences:            s.Audiences,
		AdminPasswd:          string(s.AdminPasswd),
		Logger:               logger.FromSlog(log),
		SecureCookies:        secureCookies,
		AllowedRedirectHosts: redirectHosts(s.AllowedHosts, dev),
		JWTCookieDomain:      s.CookieDomain,
		LoginPage:            true,
		UsedIDs:              shared.UsedIDs(),
		SendLimiter:          shared.SendLimiter(),
		LoginGuard:           shared.LoginGuard(),
		Sessions:             shared.Sessions(),
		HTTPClient:           s.Providers.httpClient(),
	}
	if dev {
		opts.LoginPageDirect = DevDirectProvider
	}
	svc, err := auth.New(opts)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*auth.Service, error) {
		_ = svc.Close()
		return nil, err
	}
	if dev {
		// ExampleCallback: the callbacks' example in api/auth.yaml completes a login (Swagger UI's
		// Try it out; docs/specs.md).
		if err := svc.AddDevProviderOpts(provider.DevOpts{Port: s.DevPort, Share: true, ExampleCallback: true,
			EmailFn: func(u string) string { return u + "@example.com" }}); err != nil {
			return fail(err)
		}
		if err := svc.AddDirectProvider(DevDirectProvider, provider.CredCheckerFunc(func(user, passwd string) (bool, error) {
			return user == DevDirectUser && passwd == DevDirectPassword, nil
		})); err != nil {
			return fail(err)
		}
	}
	for _, p := range s.Builtins {
		name, rest, _ := strings.Cut(p, ":")
		cid, csecret, _ := strings.Cut(rest, ":")
		if name == provider.DevName && !dev {
			return fail(errors.New("AUTH_PROVIDERS: the dev provider is for development only"))
		}
		if err := svc.AddProvider(name, cid, csecret); err != nil {
			return fail(fmt.Errorf("AUTH_PROVIDERS: %w", err))
		}
	}
	if m := s.SMTP; m.Host != "" {
		if m.From == "" {
			return fail(errors.New("AUTH_SMTP_HOST needs AUTH_SMTP_FROM"))
		}
		email := sender.NewEmail(sender.EmailParams{Host: m.Host, Port: m.Port, SMTPUserName: m.User,
			SMTPPassword: string(m.Password), StartTLS: m.StartTLS, From: m.From}, logger.FromSlog(log))
		if err := svc.AddVerifProvider("email", emailTemplate, countedSender{email, mails}); err != nil {
			return fail(err)
		}
	}
	// Providers with their own settings (AUTH_<NAME>_CID, Apple, Telegram, custom): providers.go.
	if err := AddProviders(context.Background(), svc, s.Providers, shared); err != nil {
		return fail(err)
	}
	if len(svc.Providers()) == 0 {
		log.Warn("auth: no login provider configured (set AUTH_PROVIDERS)")
	}
	return svc, nil
}

// redirectHosts are the origins besides the public URL's that a login's `from` may send the
// browser to: allowed, plus in dev mode the local dev-server origins CORS already admits there, so
// a single-page app on its dev server (Vite's localhost:5173, ...) gets its user back after a
// login instead of the JSON answer. Prod mode admits only what the operator listed (deny by
// default).
func redirectHosts(allowed []string, dev bool) []string {
	hosts := append([]string(nil), allowed...)
	if dev {
		hosts = append(hosts, cors.DevOrigins()...)
	}
	return hosts
}

// emailTemplate is the confirmation message of the "email" verified provider.
const emailTemplate = `<p>Hello {{.User}},</p>
<p>Confirm your login to {{.Site}} with this token:</p>
<pre>{{.Token}}</pre>
<p>It works once, within 15 minutes. If you did not ask for it, ignore this message.</p>`

// deviceAccounts is what the auth surface's device cookies (AUTH-DEVICE) are bound to besides the
// user name (device.Lookup): the accounts whose passwords this server knows, each with its
// password as its credential version, so a new AUTH_ADMIN_PASSWD ends every device cookie the
// admin's basic-auth clients kept. The surface registers no one (its users are the providers'),
// so no one can take over a name. Any other name has no account here: no device cookie is trusted
// or handed out for it.
func deviceAccounts(adminPasswd string, dev bool) device.Lookup {
	return func(_ context.Context, name string) (id, version string, err error) {
		switch {
		case name == "admin" && adminPasswd != "":
			return "basic:admin", adminPasswd, nil
		case dev && name == DevDirectUser:
			return DevDirectProvider + ":" + DevDirectUser, DevDirectPassword, nil
		}
		return "", "", nil
	}
}
