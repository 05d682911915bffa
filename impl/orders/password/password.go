// Package password hashes and checks the orders API's passwords with argon2id (RFC 9106), in the
// PHC string format, so parameters can be raised later without invalidating stored hashes.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost settings.
type Params struct {
	Time    uint32 // passes over memory
	Memory  uint32 // KiB
	Threads uint8
}

// Default follows OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane): tens of
// milliseconds per hash, costly enough for offline guessing.
var Default = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

// ErrMalformed reports a stored hash this package cannot read.
var ErrMalformed = errors.New("password: malformed hash")

// Hasher hashes and verifies passwords. It lets at most a few hashes run at once: each takes
// Params.Memory, so a burst of logins must not exhaust memory or starve the other requests.
type Hasher struct {
	p   Params
	sem chan struct{}
	// dummy is verified against when a user does not exist, so that an unknown username costs the
	// same time as a wrong password and the two cannot be told apart.
	dummy string
}

// NewHasher returns a Hasher with parameters p.
func NewHasher(p Params) *Hasher {
	h := &Hasher{p: p, sem: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	d, err := h.hash([]byte("no such user, constant-time filler"))
	if err != nil {
		panic(err)
	}
	h.dummy = d
	return h
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hash returns the PHC-format argon2id hash of pw with a fresh random salt.
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer func() { <-h.sem }()
	return h.hash([]byte(pw))
}

func (h *Hasher) hash(pw []byte) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey(pw, salt, h.p.Time, h.p.Memory, h.p.Threads, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches the stored hash, comparing in constant time. An empty stored
// hash checks against a dummy hash and reports false, for unknown users.
func (h *Hasher) Verify(ctx context.Context, stored, pw string) (bool, error) {
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer func() { <-h.sem }()
	if stored == "" {
		_, _ = verify(h.dummy, pw)
		return false, nil
	}
	return verify(stored, pw)
}

func verify(stored, pw string) (bool, error) {
	parts := strings.Split(stored, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrMalformed
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, ErrMalformed
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformed
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformed
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
