package throttle

import (
	"time"

	"github.com/triadhq/triad/impl/credentials/clientkey"
)

// LoginKey is the key both login endpoints count failures under: the account name, trimmed and
// lower-cased as the services look it up (usernames and emails are unique without regard to case,
// and brands trims the email, so " Alice" and "alice" are one account and get one counter), and
// the client address (remoteAddr is http.Request.RemoteAddr: the connection's, or behind a trusted
// proxy the client it named, as web.ClientAddr set it; an X-Forwarded-For the client wrote itself
// is never used).
//
// Keying on the pair means one address guessing one account is stopped, while an attacker cannot
// lock the real user out from the user's own address. An IPv6 client is keyed by its /64 prefix:
// one host commonly holds a whole /64, so keying on the full address would give it 2^64 fresh
// counters.
func LoginKey(account, remoteAddr string) string {
	return FoldAccount(account) + "|" + clientkey.Net(remoteAddr)
}

// AddressKey is the key ReserveLogin counts a client address's failures under, whatever the
// account: the client network as in LoginKey, after a prefix no LoginKey can start with (LoginKey
// lower-cases the account, so its keys hold no upper-case ASCII before the "|").
func AddressKey(remoteAddr string) string {
	return "ADDRESS|" + clientkey.Net(remoteAddr)
}

// AccountKey is the key ReserveLogin counts an account's failures under, whatever the client
// address: the folded account (FoldAccount) after a prefix no other key can start with.
func AccountKey(account string) string {
	return "ACCOUNT|" + FoldAccount(account)
}

// DeviceKey is the key ReserveDevice counts the failures of one of an account's devices under:
// the device token's id (impl/credentials/device) after a prefix no other key can start with.
func DeviceKey(deviceID string) string {
	return "DEVICE|" + deviceID
}

// DevicesAtKey names the hasher client (password.WithClient) the device logins from remoteAddr's
// network share: one per network, whatever the accounts, so signing in many accounts from one
// address does not multiply its share of the hasher.
func DevicesAtKey(remoteAddr string) string {
	return "DEVICES|" + clientkey.Net(remoteAddr)
}

// SignupKey is the key registrations are counted under per client address (loginguard.Signups):
// the client network as in LoginKey, after a prefix no LoginKey or AddressKey can start with.
func SignupKey(remoteAddr string) string {
	return "SIGNUP|" + clientkey.Net(remoteAddr)
}

// RetryAfterSeconds is d rounded up to whole seconds, at least 1: the value of a Retry-After
// header, which counts seconds, so a client that waits that long is never early.
func RetryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
