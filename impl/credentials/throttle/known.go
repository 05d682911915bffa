package throttle

import (
	"context"
	"time"

	"github.com/triadhq/triad/gen/db"
)

// Known networks: a way in for a new client of the account's owner that keeps the account's bound.
//
// The per-account cap (AccountMax) is what stops guessing one password from many addresses, and
// it is also a lock: spent by strangers, it refused the owner's right password on every client
// without her device token (a new phone, cleared cookies, the basic-auth admin's client, which
// keeps no cookie). OWASP's answer to that denial of service is to lock out untrusted clients
// only ("Slow Brute Force Protection Using Device Cookies"); a client the account signed in from is
// trusted. The network a client signed in from is a weaker sign of the owner than a device token
// (others may share it: an office, a proxy), so it is not given a lock-free pass, only a share of
// the account's allowance of its own: strangers' networks spend AccountMax less that share and
// then stop, and a login from a network the account signed in from within KnownFor still has the
// share, counted apart from theirs. The account's checks per window stay at most AccountMax in all,
// whoever sends them; a guesser who wants the known share must sit on one of the owner's networks,
// where the pair key (LoginKey, Max per window) still holds each network on its own.

// DefaultKnownFor is how long a network stays known to an account after its last successful login
// from it: as long as a device token lives (30 days), so a network in use stays known.
const DefaultKnownFor = 30 * 24 * time.Hour

// knownShare is the part of an account's allowance kept for its known networks: a fifth of it, at
// least 1 and at most all but 1 (an allowance of 1 is left to strangers' networks whole).
func knownShare(accountMax int32) int32 {
	if accountMax < 2 {
		return 0
	}
	return min(max(accountMax/5, 1), accountMax-1)
}

// KnownKey is the key that marks remoteAddr's client network (as in LoginKey) known to account:
// a prefix no other key can start with, the folded account and the network.
func KnownKey(account, remoteAddr string) string {
	return "KNOWN|" + LoginKey(account, remoteAddr)
}

// KnownAccountKey is the key an account's known networks' share is counted under, past the
// strangers' AccountKey.
func KnownAccountKey(account string) string {
	return "ACCOUNT-KNOWN|" + FoldAccount(account)
}

// reserveKnown counts an attempt of account whose strangers' allowance is spent (refused, the
// reservation reserveKnown was given) in the known networks' share, when known (the KnownKey of
// the client's network) is marked; otherwise, or when the share is spent too, it returns refused.
func (l *Limiter) reserveKnown(ctx context.Context, account string, known []byte, refused Reservation) (Reservation, error) {
	if l.knownMax == 0 {
		return refused, nil
	}
	ok, err := l.q.LoginNetworkKnown(ctx, db.LoginNetworkKnownParams{Key: known, Now: l.now()})
	if err != nil || !ok {
		return refused, err
	}
	r, err := l.reserveQuiet(ctx, hash(KnownAccountKey(account)), l.knownMax)
	if err == nil && r.Blocked {
		// Whichever window ends first gives logins from here room again.
		r.RetryAfter = min(r.RetryAfter, refused.RetryAfter)
	}
	return r, err
}

// remember marks the network key known for KnownFor from now; a nil key marks nothing.
func (l *Limiter) remember(ctx context.Context, key []byte) error {
	if key == nil {
		return nil
	}
	return l.q.RememberLoginNetwork(ctx, db.RememberLoginNetworkParams{Key: key, ExpiresAt: l.now().Add(l.knownFor)})
}
