// Package throttle counts login attempts per key in a fixed window, in PostgreSQL, so that a login
// endpoint can refuse a key that failed too often, and every replica over the database shares the
// count: ten wrong passwords spread over any number of replicas block the key.
//
// Only a password that was checked and was wrong counts. A login handler calls Reserve before
// checking a password: that counts the attempt, or reports the key blocked. Then exactly one of:
//   - the password was wrong: nothing more, the reserved attempt stays counted;
//   - the password was right: Reservation.Succeeded forgets the key's attempts;
//   - the check did not happen (the database failed, the request was cancelled or timed out, the
//     server was too busy to hash): Reservation.Release gives the attempt back, so an outage never
//     locks a user out.
//
// Reserving before the check, rather than counting after it, is what keeps requests sent in
// parallel from all slipping in while the first are being hashed: at most Max checks run per key
// and window, however many requests arrive at once.
//
// ReserveLogin is what login endpoints use for a client that is not one of the account's devices:
// it counts the attempt three times, under the account and client address (LoginKey, Max per
// window, then refused), under the account alone over every address (AccountKey, AccountMax per
// window, then refused: guesses from a botnet or forged addresses at one account stop there), and
// under the client address alone (AddressKey, AddressMax per window). The account's AccountMax is
// split: the networks it never signed in from share four fifths of it, and once those are spent a
// login from a network the account did sign in from (a known network, known.go) is counted in the
// last fifth, so a guesser elsewhere does not lock its owner out of a new client at home, while the
// account's checks per window stay at most AccountMax in all. A client that signed in to
// the account before carries a device token (impl/credentials/device) and is counted by
// ReserveDevice instead, under the device alone, so none of these locks keeps it out. The address layer never refuses outright: many real users
// can share one address (an office behind NAT, every client behind an untrusted proxy), and an
// attacker guessing made-up accounts from it must not lock them out. Past AddressMax the address
// is slowed instead: its logins are checked one at a time, AddressInterval apart, so guessing from
// one address stays bounded (Window/AddressInterval more checks per window), a real user's right
// password is still checked after a short wait, and only a login that would wait longer than
// three intervals (a guesser sending many at once) is refused, briefly.
//
// A key found blocked (or an address whose schedule was found full) is remembered in process for
// a second, so a flood of refusals costs the database almost nothing (blocked.go).
package throttle

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// Defaults used for zero fields of Options.
const (
	// DefaultMax is the number of failures a key may have in one window before it is blocked.
	DefaultMax = 10
	// DefaultAddressMax is the number of failures one client address may have in one window,
	// over all the accounts it tries, before it is blocked: ten times DefaultMax, so ten people
	// behind one NAT who each mistype their password a few times are not locked out, while one
	// host spraying guesses over many usernames gets 100 checks per 15 minutes (400 a hour)
	// instead of as many as the hasher can do.
	DefaultAddressMax = 100
	// DefaultWindow is how long a key's failures are counted, from its first attempt; a blocked
	// key stays blocked until its window ends.
	DefaultWindow = 15 * time.Minute
	// DefaultAccountMax is the number of failures one account may have in one window over every
	// client address before it is refused to all but its own devices: five addresses' worth of
	// DefaultMax, so forty forged or botnet addresses get 50 checks of one password, not 400. Its
	// last fifth is kept for the account's known networks (known.go): strangers' networks get 40.
	DefaultAccountMax = 50
	// DefaultAddressInterval is how far apart the checks of a client address past AddressMax are
	// scheduled: at most 450 more checks per 15-minute window from one address, and a real user
	// there waits about 2 s.
	DefaultAddressInterval = 2 * time.Second
)

// addressQueue is how many intervals ahead an address past its limit may have checks scheduled;
// a login that would wait longer is refused (Blocked) until the schedule has room.
const addressQueue = 3

// Options configure a Limiter. Zero fields take the defaults, so a zero Options is the
// production setting; there is no way to turn the limit off.
type Options struct {
	// Max is the number of attempts counted per key in one window; the key is blocked once it
	// reaches Max, for the rest of that window.
	Max int
	// AddressMax is the number of attempts ReserveLogin counts per client address, over all
	// accounts, in one window.
	AddressMax int
	// AccountMax is the number of attempts ReserveLogin counts per account, over all client
	// addresses, in one window: a fifth of it (at least 1 when AccountMax is 2 or more) is kept
	// for the networks the account signed in from (known.go), the rest is the networks it never
	// did; the account is refused to every client but its devices and its known networks once
	// the rest is spent, and to those too once the fifth is, for the rest of that window.
	AccountMax int
	// KnownFor is how long a network the account signed in from stays known to it after its last
	// successful login there; 0 means DefaultKnownFor.
	KnownFor time.Duration
	// AddressInterval is the spacing of the checks of a client address that reached AddressMax in
	// its window (see the package comment).
	AddressInterval time.Duration
	// Window is the length of the counting window, starting at the key's first attempt.
	Window time.Duration
	// Now is the clock; nil means time.Now. Tests inject one to move past a window.
	Now func() time.Time
	// OnBlocked, when set, is called each time Reserve refuses a blocked key (the server counts
	// refusals in its metrics).
	OnBlocked func()
}

// Limiter counts attempts per key in PostgreSQL. It is safe for concurrent use.
type Limiter struct {
	q          *db.Queries
	max        int32
	addressMax int32
	// accountMax is what strangers' networks may spend of Options.AccountMax, knownMax the share
	// kept for the account's known networks; the two add up to Options.AccountMax.
	accountMax int32
	knownMax   int32
	knownFor   time.Duration
	slot       time.Duration
	window     time.Duration
	now        func() time.Time
	onBlocked  func()

	blocked blockedCache // keys found at their limit
	full    blockedCache // address keys whose check schedule was found full
}

// New returns a Limiter over the database of conn (the login_throttle table), with opts, zero
// fields replaced by the defaults.
func New(conn db.DBTX, opts Options) *Limiter {
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	if opts.AddressMax <= 0 {
		opts.AddressMax = DefaultAddressMax
	}
	if opts.AccountMax <= 0 {
		opts.AccountMax = DefaultAccountMax
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.AddressInterval <= 0 {
		opts.AddressInterval = DefaultAddressInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.KnownFor <= 0 {
		opts.KnownFor = DefaultKnownFor
	}
	account := int32(min(opts.AccountMax, 1<<30))
	known := knownShare(account)
	return &Limiter{q: db.New(conn), max: int32(min(opts.Max, 1<<30)), addressMax: int32(min(opts.AddressMax, 1<<30)),
		accountMax: account - known, knownMax: known, knownFor: opts.KnownFor,
		slot: opts.AddressInterval, window: opts.Window, now: opts.Now, onBlocked: opts.OnBlocked}
}

// hash is how a key is stored: a fixed 32 bytes, so a caller-chosen key of any length (an account
// name from a request body) costs the same space, and the table holds no account names.
func hash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Reservation is one attempt counted by Reserve.
type Reservation struct {
	// Blocked reports that the key had reached Max in its window: nothing was counted, and the
	// caller must refuse the login without checking the password.
	Blocked bool
	// RetryAfter is, when Blocked, how long until the window ends.
	RetryAfter time.Duration
	// Wait is, when not Blocked, how long the caller must wait before checking the password: the
	// time to the slot its address was given (ReserveLogin past AddressMax), else 0.
	Wait time.Duration

	l   *Limiter
	key []byte
	end time.Time // the end of the window the attempt was counted in
	// also are the keys ReserveLogin also counted the attempt under (the account's and the
	// address's), each given back on Release and on Succeeded; none for Reserve.
	also []counted
	// known is the key of the account's network (KnownKey) that Succeeded marks known; nil for
	// Reserve.
	known []byte
}

// counted is one key an attempt was counted under, with the end of the window it was counted in.
type counted struct {
	key []byte
	end time.Time
}

// releaseTimeout bounds Release and Succeeded, which run on a context of their own: they follow a
// request that may have been cancelled or timed out, and must still reach the database.
const releaseTimeout = 5 * time.Second

// Reserve counts one attempt for key, or reports it blocked. An error (the database is down) means
// nothing was counted; the caller refuses the login as a server error.
func (l *Limiter) Reserve(ctx context.Context, key string) (Reservation, error) {
	return l.reserve(ctx, hash(key), l.max)
}

// ReserveLogin counts one login attempt for account from remoteAddr (http.Request.RemoteAddr)
// under three keys: the pair (LoginKey, blocked at Max), the account (AccountKey, blocked at
// AccountMax) and the address alone (AddressKey). It reports the attempt blocked when the pair or
// the account is; then nothing stays counted. An address that reached AddressMax does not block:
// the attempt is given the address's next check slot (Reservation.Wait), and is blocked only when
// that slot is more than three AddressIntervals away, with RetryAfter until the schedule has room.
// An error means nothing was counted.
//
// The pair is reserved first, so a blocked pair spends none of its account's or address's
// allowance, and the account before the address, so guesses refused for the account take no
// check slot of the address.
func (l *Limiter) ReserveLogin(ctx context.Context, account, remoteAddr string) (Reservation, error) {
	addr := hash(AddressKey(remoteAddr))
	if wait, ok := l.full.get(addr, l.now()); ok {
		// The address's schedule was full a moment ago: refused without a query.
		if l.onBlocked != nil {
			l.onBlocked()
		}
		return Reservation{Blocked: true, RetryAfter: wait}, nil
	}
	r, err := l.reserve(ctx, hash(LoginKey(account, remoteAddr)), l.max)
	if err != nil || r.Blocked {
		return r, err
	}
	r.known = hash(KnownKey(account, remoteAddr))
	acc, err := l.reserveQuiet(ctx, hash(AccountKey(account)), l.accountMax)
	if err == nil && acc.Blocked {
		acc, err = l.reserveKnown(ctx, account, r.known, acc)
	}
	if err == nil && acc.Blocked && l.onBlocked != nil {
		l.onBlocked()
	}
	if err != nil || acc.Blocked {
		// Best effort, as Release always is: a pair attempt that stays counted only moves that
		// pair's block nearer.
		_ = r.Release()
		return acc, err
	}
	r.also = append(r.also, counted{acc.key, acc.end})
	a, err := l.reserveQuiet(ctx, addr, l.addressMax)
	if err == nil && a.Blocked {
		a, err = l.takeSlot(ctx, addr)
	}
	if err != nil || a.Blocked {
		_ = r.Release()
		if a.Blocked && l.onBlocked != nil {
			l.onBlocked()
		}
		return a, err
	}
	if a.l != nil {
		r.also = append(r.also, counted{a.key, a.end})
	}
	r.Wait = a.Wait
	return r, nil
}

// ReserveDevice counts one login attempt of a device that signed in to account before (its
// token's id, impl/credentials/device) from remoteAddr under the device alone (DeviceKey, blocked
// at Max): none of the pair, account or address counts of ReserveLogin apply to it, so others'
// guesses never keep it out, while a stolen token still gets no more than Max guesses per window.
// Its success marks remoteAddr's network known to account, as ReserveLogin's does.
func (l *Limiter) ReserveDevice(ctx context.Context, deviceID, account, remoteAddr string) (Reservation, error) {
	r, err := l.reserve(ctx, hash(DeviceKey(deviceID)), l.max)
	if err == nil && !r.Blocked {
		r.known = hash(KnownKey(account, remoteAddr))
	}
	return r, err
}

// takeSlot schedules a check of an address past its limit (Reservation.Wait until its slot), or
// reports it blocked when its schedule is full; nothing is counted either way.
func (l *Limiter) takeSlot(ctx context.Context, h []byte) (Reservation, error) {
	maxWait := addressQueue * l.slot
	now := l.now()
	slot, err := l.q.TakeLoginSlot(ctx, db.TakeLoginSlotParams{Key: h, Now: now,
		IntervalUs: l.slot.Microseconds(), MaxWaitUs: maxWait.Microseconds()})
	if err == nil {
		return Reservation{Wait: max(slot.Sub(now), 0)}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return Reservation{}, err
	}
	row, err := l.q.GetLoginSlot(ctx, h)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !row.ExpiresAt.After(now) {
		// The window ended (or was swept) since the address was found blocked: it is under its
		// limit again.
		return l.reserveQuiet(ctx, h, l.addressMax)
	}
	if err != nil {
		return Reservation{}, err
	}
	wait := time.Nanosecond
	if row.NextSlot.Valid {
		wait = max(row.NextSlot.Time.Sub(now)-maxWait, wait)
	}
	l.full.put(h, now, wait)
	return Reservation{Blocked: true, RetryAfter: wait}, nil
}

func (l *Limiter) reserve(ctx context.Context, h []byte, maxAttempts int32) (Reservation, error) {
	r, err := l.reserveQuiet(ctx, h, maxAttempts)
	if r.Blocked && l.onBlocked != nil {
		l.onBlocked()
	}
	return r, err
}

// reserveQuiet is reserve without counting a refusal (OnBlocked): an address past its limit is
// slowed, not refused, unless takeSlot says so.
func (l *Limiter) reserveQuiet(ctx context.Context, h []byte, maxAttempts int32) (Reservation, error) {
	if wait, ok := l.blocked.get(h, l.now()); ok {
		// Refused a moment ago; the window's end is at least wait away.
		return Reservation{Blocked: true, RetryAfter: wait}, nil
	}
	// Twice at most: the key's row can vanish (a success elsewhere) between the two queries.
	for range 2 {
		now := l.now()
		end, err := l.q.ReserveLoginAttempt(ctx, db.ReserveLoginAttemptParams{Key: h, ExpiresAt: now.Add(l.window), Now: now, Max: maxAttempts})
		if err == nil {
			return Reservation{l: l, key: h, end: end}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Reservation{}, err
		}
		end, err = l.q.GetLoginThrottleEnd(ctx, h)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return Reservation{}, err
		}
		wait := max(end.Sub(now), time.Nanosecond)
		l.blocked.put(h, now, wait)
		return Reservation{Blocked: true, RetryAfter: wait}, nil
	}
	return Reservation{}, errors.New("throttle: key changed during reservation")
}

// Release gives the reserved attempt back, under every key it was counted under: the password
// was not checked.
func (r Reservation) Release() error {
	if r.l == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	err := r.l.q.ReleaseLoginAttempt(ctx, db.ReleaseLoginAttemptParams{Key: r.key, ExpiresAt: r.end})
	return errors.Join(err, r.releaseAlso(ctx))
}

// Succeeded forgets the key's attempts: the password was right. Of the account and address counts
// of ReserveLogin only this attempt is given back: their other failures stay counted, or one
// account of the attacker's own, logged in now and then, would reset its guesses at others, and
// the real user's login would reset the guesses at the user's account. The client's network is
// known to the account from now on (KnownFor).
func (r Reservation) Succeeded() error {
	if r.l == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	err := r.l.q.DeleteLoginThrottle(ctx, r.key)
	return errors.Join(err, r.releaseAlso(ctx), r.l.remember(ctx, r.known))
}

func (r Reservation) releaseAlso(ctx context.Context) error {
	var errs []error
	for _, c := range r.also {
		errs = append(errs, r.l.q.ReleaseLoginAttempt(ctx, db.ReleaseLoginAttemptParams{Key: c.key, ExpiresAt: c.end}))
	}
	return errors.Join(errs...)
}

// SweepEvery is how often the server runs Sweep (through impl/platform/sweep).
const SweepEvery = time.Minute

// Sweep deletes the rows whose window ended, of every limiter sharing the table, and reports how
// many went. Such rows count nothing (Reserve starts a new window over them); deleting them keeps
// the table as small as the keys seen in the last window. It deletes in batches (the query takes
// at most 1000 rows), so no statement holds many locks, until a batch comes back short.
func (l *Limiter) Sweep(ctx context.Context) (int64, error) {
	n, err := sweep.Batches(ctx, func(ctx context.Context) (int64, error) { return l.q.DeleteExpiredLoginThrottles(ctx, l.now()) })
	if err != nil {
		return n, fmt.Errorf("throttle: sweep: %w", err)
	}
	return n, nil
}
