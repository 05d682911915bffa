// Package device issues and checks device tokens, OWASP's "device cookies" (Slow Brute Force
// Protection Using Device Cookies): a client that signed in to an account once is given a signed
// token naming that account, and presents it on its later logins. A login that carries a valid
// token for the account it logs in to is the account's own device: it is counted under the
// device alone (impl/credentials/loginguard), past the address schedule and the per-account lock
// that someone else's guesses may have set, so guessing from the user's address, through the
// user's proxy or at the user's name never locks the user out of a client the user has used.
//
// A token is "v1.<expiry>.<nonce>.<mac>": the expiry in Unix seconds, 16 random bytes naming the
// device, and an HMAC-SHA256 over the version, the account (Account: its folded name, fold.Name,
// so every spelling of it is one, and a SHA-256 of its id and credential version), the expiry and
// the nonce, under a key of the Signer's own. Nothing is stored: any replica with the same key
// checks any token. A token is the account's as it was when issued: an account that changed its
// password (a new credential version), or another account that took the name later (another id),
// finds it worth nothing.
package device

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/credentials/fold"
)

// DefaultTTL is how long a device token is valid from its issue: a month, renewed by every login
// that uses it once half of it has passed, so a device in use keeps its token and one unused for
// a month is a stranger again.
const DefaultTTL = 30 * 24 * time.Hour

// Signer issues and checks the device tokens of one login surface.
type Signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewSigner returns the Signer of purpose (the surface's name: a token of one surface is nothing
// on another, where the same name may be another account), keyed by secret: the key is
// HMAC-SHA256(secret, "device token|"+purpose), so the secret itself never signs a token and the
// surfaces' keys differ. ttl 0 is DefaultTTL; now nil is time.Now.
func NewSigner(secret []byte, purpose string, ttl time.Duration, now func() time.Time) *Signer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("device token|" + purpose))
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: m.Sum(nil), ttl: ttl, now: now}
}

// TTL is how long a token issued now is valid: the cookie's Max-Age.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Account is the account a device token is bound to. Name is the name a login gives (in any
// spelling: it is folded); ID names the account for its whole life and is never another account's
// (a database id: someone who registers the name after its owner deleted or renamed the account
// has another); Version changes whenever the account's credential does (the password hash, which
// a new salt changes with every new password). The ID and Version are only hashed into the
// token's MAC input, never written in the token. An Account with neither (NameOnly) binds to the
// name alone: for a surface with no account store (a test).
type Account struct {
	Name, ID, Version string
}

// NameOnly is the Account of name with no id or credential version.
func NameOnly(name string) Account { return Account{Name: name} }

// Lookup finds the id and credential version of the account a login names (Account), or "" ids
// for no such account: a surface's accounts as they are now, read before the password is checked
// (impl/credentials/loginguard.Guard.BindDevices).
type Lookup func(ctx context.Context, name string) (id, version string, err error)

// Issue returns a fresh token for account, with a new device nonce.
func (s *Signer) Issue(account Account) string {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		panic(err) // crypto/rand failing leaves nothing sensible to do
	}
	exp := strconv.FormatInt(s.now().Add(s.ttl).Unix(), 10)
	n := base64.RawURLEncoding.EncodeToString(nonce[:])
	return "v1." + exp + "." + n + "." + s.mac(account, exp, n)
}

func (s *Signer) mac(account Account, exp, nonce string) string {
	bound := ""
	if account.ID != "" || account.Version != "" {
		// Length-prefixed, so no id and version run into another pair's.
		b := sha256.Sum256([]byte(strconv.Itoa(len(account.ID)) + ":" + account.ID + "|" + account.Version))
		bound = base64.RawURLEncoding.EncodeToString(b[:])
	}
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("v1|" + fold.Name(account.Name) + "|" + bound + "|" + exp + "|" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Presented is the value a login passes on for the device cookies a client sent under one name
// (http.Request.CookiesNamed): their values joined by ",", which no token holds. A client may send
// several (an old cookie on a wider path, one set by another site of the same host); CheckAny
// picks the one valid for the account, whichever came first.
func Presented(cookies []*http.Cookie) string {
	vals := make([]string, 0, len(cookies))
	for _, c := range cookies {
		if c.Value != "" && len(vals) < maxPresented {
			vals = append(vals, c.Value)
		}
	}
	return strings.Join(vals, ",")
}

// maxPresented bounds the tokens of one request that are checked (each costs an HMAC).
const maxPresented = 8

// CheckAny is Check of the first of the tokens in presented (Presented's form) that is valid for
// account.
func (s *Signer) CheckAny(presented string, account Account) (id string, renew, ok bool) {
	for i, tok := range strings.Split(presented, ",") {
		if i == maxPresented {
			break
		}
		if id, renew, ok = s.Check(tok, account); ok {
			return id, renew, true
		}
	}
	return "", false, false
}

// Check reports whether tok is a valid, unexpired token of this Signer for account, and then the
// device it names (its nonce: what a device's own failures are counted under) and whether it is
// due for renewal (less than half its lifetime left: the caller hands out a fresh one).
func (s *Signer) Check(tok string, account Account) (id string, renew, ok bool) {
	if len(tok) > 200 {
		return "", false, false
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || parts[0] != "v1" {
		return "", false, false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !hmac.Equal([]byte(parts[3]), []byte(s.mac(account, parts[1], parts[2]))) {
		return "", false, false
	}
	left := time.Unix(exp, 0).Sub(s.now())
	if left <= 0 {
		return "", false, false
	}
	return parts[2], left < s.ttl/2, true
}
