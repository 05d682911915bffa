// Package loginlimit is how the auth service limits password guessing on the logins that check a
// password: a direct provider's login (GET/POST /auth/<name>/login) and basic auth (AdminPasswd,
// BasicAuthChecker). Both run their check through a Guard, which counts the failures and refuses a
// login that has had too many before its password is checked.
//
// The default is NewMemory (one process). The reference server passes its PostgreSQL guard
// (impl/credentials/loginguard, the same one its orders and brands logins run), so the count is shared by every
// replica and the rules are the same on every surface: only a checked, wrong password counts
// (ErrBadCredentials), per account and client address, and one address guessing over many accounts
// is slowed rather than refused.
package loginlimit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/credentials/clientkey"
	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/credentials/windowcount"
)

// ErrBadCredentials is what a check returns for a wrong password (or an unknown user): the one
// outcome a Guard keeps counted. Any other error of a check means the password was not checked.
var ErrBadCredentials = errors.New("loginlimit: incorrect user or password")

// Guard runs one password login under a failed-login limit.
type Guard interface {
	// Login runs check, the password check of account, from client (http.Request.RemoteAddr). It
	// returns nil when check passed, check's error as it is (ErrBadCredentials: counted; anything
	// else: not), or, without running check, a *loginguard.Blocked (or an error wrapping one) when
	// the limit refuses the login: the one refusal every guard returns and every surface renders
	// (refusal.WriteLoginRefused).
	Login(ctx context.Context, account, client string, check func(context.Context) error) error
}

// Defaults of NewMemory with zero arguments: 10 wrong passwords per account and client address in
// 15 minutes, as on every surface of the reference server.
const (
	DefaultMax    = 10
	DefaultWindow = 15 * time.Minute
)

// Memory is an in-process Guard: failures are counted per account (trimmed, lower-cased) and
// client address (an IPv6 one by its /64) for a window from the first; at Max the pair is refused
// until the window ends, without its password being checked. A success forgets the pair's count.
// Replicas behind a load balancer each count alone: give them a shared Guard.
type Memory struct {
	max    int
	counts *windowcount.Counter
}

// NewMemory returns an in-memory Guard refusing a pair at max failures in window (zero values: the
// defaults); now is the clock (nil: time.Now).
func NewMemory(max int, window time.Duration, now func() time.Time) *Memory {
	if max <= 0 {
		max = DefaultMax
	}
	if window <= 0 {
		window = DefaultWindow
	}
	return &Memory{max: max, counts: windowcount.New(window, now)}
}

// Login implements Guard: the attempt is reserved before check runs (parallel guesses get no more
// than max checks), kept when check says ErrBadCredentials, forgotten with the pair's count on
// success, and given back on any other error.
func (m *Memory) Login(ctx context.Context, account, client string, check func(context.Context) error) error {
	key := strings.ToLower(strings.TrimSpace(account)) + "|" + clientkey.Net(client)
	r, wait := m.counts.Reserve(windowcount.Limit{Key: key, Max: m.max})
	if wait > 0 {
		return &loginguard.Blocked{Seconds: throttle.RetryAfterSeconds(wait)}
	}
	err := check(ctx)
	switch {
	case errors.Is(err, ErrBadCredentials):
	case err == nil:
		r.Forget()
	default:
		r.Release()
	}
	return err
}

// DeviceGuard is a Guard that knows the clients that signed in before (OWASP's device cookies;
// the reference server's guard, impl/credentials/loginguard, is one): a successful login hands the
// client a device token to keep, and a later login presenting a valid one for the same account is
// never refused for others' guesses (at the client's address, behind its proxy, or at the account
// from anywhere), only for its own. Logins of the library through a DeviceGuard keep the token in
// the DeviceCookie cookie.
type DeviceGuard interface {
	Guard
	// LoginDevice is Login with the device token the client presented ("" for none); on success
	// it returns the token the client should keep from now on, or "" to keep the one it has.
	LoginDevice(ctx context.Context, account, client, presented string, check func(context.Context) error) (keep string, err error)
	// DeviceTTL is how long a token handed out now is valid (the cookie's Max-Age).
	DeviceTTL() time.Duration
}

// DeviceCookie is the cookie the library's password logins (direct providers, basic auth) keep a
// client's device token in when their Guard is a DeviceGuard.
const DeviceCookie = "AUTH-DEVICE"

// Run runs check, the password check of account for request r, under g: through LoginDevice with
// r's DeviceCookie when g is a DeviceGuard, setting the cookie to keep on w (HttpOnly, SameSite
// Strict, Secure over TLS, for the whole site: basic auth reaches any route), else through Login.
// It returns what the guard returned.
func Run(w http.ResponseWriter, r *http.Request, g Guard, account string, check func(context.Context) error) error {
	dg, ok := g.(DeviceGuard)
	if !ok {
		return g.Login(r.Context(), account, r.RemoteAddr, check)
	}
	presented := device.Presented(r.CookiesNamed(DeviceCookie))
	keep, err := dg.LoginDevice(r.Context(), account, r.RemoteAddr, presented, check)
	if err == nil && keep != "" {
		http.SetCookie(w, &http.Cookie{Name: DeviceCookie, Value: keep, Path: "/", MaxAge: int(dg.DeviceTTL().Seconds()),
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	}
	return err
}
