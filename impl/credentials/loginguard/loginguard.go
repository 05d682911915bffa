// Package loginguard runs one password login the way every surface must: ask the hasher whether it
// has room, reserve the attempt against the failed-login limit, check the password, then give the
// attempt back or forget the key's failures. The surfaces differ only in how they render the
// outcome (an RFC 6749 body at the orders token endpoint, the shared Error body in brands), so the
// guard returns errors for them to map and leaves the wire format to the edge.
//
// The properties it keeps, for every surface alike:
//   - a login the hasher would shed is refused (password.ErrBusy) before any database work, and an
//     admitted one holds its hasher place from then on (password.Admit): under a flood those
//     queries, not the hashes, are what keeps everyone else waiting;
//   - the attempt is reserved before the password is checked, so requests sent in parallel cannot
//     all slip in while the first are being hashed: at most throttle's Max checks run per key and
//     window, and a blocked key costs no argon2 work, so the answer cannot tell a right password
//     from a wrong one;
//   - only a password that was checked and was wrong keeps the attempt counted; a check that did
//     not happen (database down, hasher busy, request cancelled) gives it back;
//   - a client address past its own limit (many accounts guessed from it) is slowed, never refused
//     while its schedule has room: the check waits for the address's slot (throttle.ReserveLogin),
//     so a real user behind the same address still gets in with the right password;
//   - a client that signed in to the account before is never locked out by others' guesses (OWASP's
//     device cookies): a successful login hands out a device token (impl/credentials/device) for
//     the client to keep, and a later login carrying a valid one for the same account is counted
//     under that device alone (throttle.ReserveDevice) and takes its hasher place in the account's
//     own devices' share: past the address's schedule, the per-address and per-account locks and
//     the address's share of the hasher, which others at the same address, behind the same proxy
//     or guessing the same name fill. A device is still refused after throttle's Max wrong
//     passwords, so a stolen token is worth no more guesses than an address.
//
// Unknown accounts count like known ones (the check does dummy work and reports the wrong
// password): otherwise a 429 would tell which accounts exist.
package loginguard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
)

// ErrTooManyAttempts matches (errors.Is) the *Blocked error of a login the limit refused.
var ErrTooManyAttempts = errors.New("too many failed logins")

// Blocked is a request a window limit refused before doing its work: a login whose password the
// failed-login limit did not check (Why nil or ErrTooManyAttempts), or a registration the cap
// refused before anything was hashed or stored (Why ErrTooManySignups). It is the one "blocked"
// error of every such limit, whichever surface or library counted.
type Blocked struct {
	// Seconds is the wait until the key's window ends, rounded up (the Retry-After value).
	Seconds int
	// Why is the sentinel the refusal matches (errors.Is); nil is ErrTooManyAttempts.
	Why error
}

// Error says what was refused and how long the caller must wait.
func (b *Blocked) Error() string {
	if b.Why == ErrTooManySignups {
		return fmt.Sprintf("too many registrations from this address; try again in %d seconds", b.Seconds)
	}
	return fmt.Sprintf("too many failed logins; try again in %d seconds", b.Seconds)
}

// Unwrap makes a *Blocked match its Why, ErrTooManyAttempts when it has none.
func (b *Blocked) Unwrap() error {
	if b.Why == nil {
		return ErrTooManyAttempts
	}
	return b.Why
}

// Refused reports whether err is a refused login (a *Blocked matching ErrTooManyAttempts in its
// chain, whichever guard refused: this one, or the auth library's in-memory loginlimit.Memory),
// with its Retry-After in seconds (at least 1) and its sentence. Every answer to a refused login
// reads it here: refusal.WriteLoginRefused's 429 too_many_attempts and the OAuth token endpoint's
// invalid_grant.
func Refused(err error) (seconds int, message string, ok bool) {
	var b *Blocked
	if !errors.As(err, &b) || !errors.Is(b, ErrTooManyAttempts) {
		return 0, "", false
	}
	return max(1, b.Seconds), b.Error(), true
}

// RetryAfter is the Retry-After seconds of a *Blocked in err's chain, or 0 (a refusal table's
// RetryAfter function).
func RetryAfter(err error) int {
	var b *Blocked
	if errors.As(err, &b) {
		return b.Seconds
	}
	return 0
}

// Guard is one surface's login guard: its hasher, its failed-login limiter and its device tokens.
type Guard struct {
	hasher  *password.Hasher
	limiter *throttle.Limiter
	wrong   error
	devices *device.Signer
	bind    device.Lookup
}

// BindDevices binds the guard's device tokens to the account's id and credential version as well
// as its name (device.Account): lookup returns them as they are now (the user's id and password
// hash), or an "" id for no such account. A token issued to one is then worth nothing to another:
// a password change ends every device of the account, and whoever registers a name its owner gave
// up (after a delete or a rename) does not inherit the owner's devices. Call it before the guard's
// first login.
func (g *Guard) BindDevices(lookup device.Lookup) {
	g.bind = lookup
}

// bound is account as the device tokens name it: with its id and credential version when the
// guard has a lookup. ok is false when they could not be read or there is no such account: no
// token is trusted or handed out then.
func (g *Guard) bound(ctx context.Context, account string) (a device.Account, ok bool) {
	if g.bind == nil {
		return device.NameOnly(account), true
	}
	id, version, err := g.bind(ctx, account)
	if err != nil || id == "" {
		return device.Account{}, false
	}
	return device.Account{Name: account, ID: id, Version: version}, true
}

// New returns the guard over hasher and limiter. wrong is the surface's error for a checked-wrong
// password (matched with errors.Is): the one outcome of a check that keeps the attempt counted. A
// nil hasher admits every login (a surface whose checks hash nothing of its own). devices signs
// and checks the surface's device tokens (LoginDevice); nil hands out none and trusts none.
func New(hasher *password.Hasher, limiter *throttle.Limiter, wrong error, devices *device.Signer) *Guard {
	return &Guard{hasher: hasher, limiter: limiter, wrong: wrong, devices: devices}
}

// DeviceTTL is how long the device tokens LoginDevice hands out are valid (the cookie's Max-Age);
// 0 when the guard has no signer.
func (g *Guard) DeviceTTL() time.Duration {
	if g.devices == nil {
		return 0
	}
	return g.devices.TTL()
}

// Login is LoginDevice for a client that presents no device token, keeping none: the check runs
// under the per-account, per-address and pair limits.
func (g *Guard) Login(ctx context.Context, account, remoteAddr string, check func(context.Context) error) error {
	_, err := g.LoginDevice(ctx, account, remoteAddr, "", check)
	return err
}

// LoginDevice runs check, the surface's password check for account, under the guard; remoteAddr is
// the client's address (http.Request.RemoteAddr) and presented the device tokens the client sent
// (its cookies, device.Presented; "" for none): the first valid for account counts. A valid token
// of this guard's signer for account makes the login the account's device's: counted under the device alone (throttle.ReserveDevice), with a hasher share
// of the account's devices. Any other login is counted per account and client address, per account
// and per address (throttle.ReserveLogin).
//
// It returns, when check passed, the device token the client should keep from now on (a fresh one,
// or "" when the one it presented stays good or the guard has no signer), with nil; and otherwise
// one of:
//   - password.ErrBusy: the hasher had no room; nothing was read or counted;
//   - password.ErrClientBusy: the client had its share of the hasher in use and its line full;
//     nothing was read or counted;
//   - a *Blocked (ErrTooManyAttempts): the limit refused the login; check did not run;
//   - check's error matching wrong: the password was wrong, and the attempt stays counted;
//   - any other error, from the limiter's database or from check (password.ErrBusy among them):
//     the password was not checked, and the attempt was given back.
func (g *Guard) LoginDevice(ctx context.Context, account, remoteAddr, presented string, check func(context.Context) error) (keep string, err error) {
	deviceID, renew, trusted := "", false, false
	if g.devices != nil && presented != "" {
		if name, ok := g.bound(ctx, account); ok {
			deviceID, renew, trusted = g.devices.CheckAny(presented, name)
		}
	}
	if trusted {
		// The devices at one address share a place at the hasher of their own, apart from the
		// address's strangers, which guessers at the same address or behind the same proxy may
		// fill. Its hashes do not queue behind strangers' either (password.WithPriority). One
		// place per address, not per account: K accounts farmed and signed in from one address
		// would otherwise bring K priority shares and crowd every other device out. Each account
		// waits for those places in a line of its own (password.WithSubLine), so one account's
		// flood is refused while another's device at the same address waits its turn, and a place
		// given back goes to the account with the fewest logins there: a real user's one login
		// waits for one hash, not behind the farmed accounts' lines.
		ctx = password.WithPriority(password.WithSubLine(password.WithClient(ctx, throttle.DevicesAtKey(remoteAddr)), throttle.FoldAccount(account)))
	}
	// The login's place at the hasher is taken now, before the database work, and held until it
	// is answered (password.Admit): a check that only asked whether there was room would let every
	// flooding login through while the ones before it still wait for the database.
	outer := ctx
	ctx, admitted, err := g.admit(outer)
	if err != nil {
		return "", err
	}
	defer func() { admitted() }()
	var res throttle.Reservation
	if trusted {
		res, err = g.limiter.ReserveDevice(ctx, deviceID, account, remoteAddr)
	}
	if !trusted || err == nil && res.Blocked {
		// A device that spent its own guesses (a thief holding the token, or its owner
		// mistyping) is a stranger again, not locked: its owner still gets in from a network
		// the account knows, within the account's bound (throttle's known networks), and is
		// given a fresh token, whose device has no failures.
		trusted = false
		res, err = g.limiter.ReserveLogin(ctx, account, remoteAddr)
	}
	if err != nil {
		return "", err
	}
	if res.Blocked {
		return "", &Blocked{Seconds: throttle.RetryAfterSeconds(res.RetryAfter)}
	}
	if res.Wait > 0 {
		// The client address is past its failed-login limit: this check waits for the slot the
		// address was given, which is what slows a guesser there without refusing anyone. It
		// waits without its hasher place, or a guesser's waiting logins would hold its share
		// and queue every other login from the address (a real user's) behind them; it asks for
		// one again when its slot comes.
		admitted()
		t := time.NewTimer(res.Wait)
		select {
		case <-t.C:
		case <-outer.Done():
			t.Stop()
			_ = res.Release()
			return "", outer.Err()
		}
		if ctx, admitted, err = g.admit(outer); err != nil {
			_ = res.Release()
			return "", err
		}
	}
	err = check(ctx)
	if errors.Is(err, g.wrong) {
		return "", err
	}
	if err != nil {
		// Best effort, as both calls below: an attempt that stays counted only moves the key's
		// block nearer, and its window ends anyway.
		_ = res.Release()
		return "", err
	}
	_ = res.Succeeded()
	if g.devices == nil || trusted && !renew {
		return "", nil
	}
	name, ok := g.bound(ctx, account)
	if !ok {
		return "", nil
	}
	return g.devices.Issue(name), nil
}

// admit is the hasher's Admit, or a place that costs nothing without a hasher.
func (g *Guard) admit(ctx context.Context) (context.Context, func(), error) {
	if g.hasher == nil {
		return ctx, func() {}, nil
	}
	return g.hasher.Admit(ctx)
}
