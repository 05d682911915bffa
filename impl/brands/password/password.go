// Package password hashes and checks brands API passwords with argon2id (RFC 9106), stored in the
// PHC string format ($argon2id$v=19$m=...,t=...,p=...$salt$key) so the cost can be raised later
// while old hashes keep verifying with the parameters written in them.
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
	Threads uint8  // lanes
}

// Default is the production cost: OWASP's argon2id setting (19 MiB, 2 passes, 1 lane), which takes
// roughly 20-40 ms per hash on one core, expensive enough to slow offline guessing a great deal.
var Default = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

// Fast is a deliberately weak cost for tests that create many users. Never use it in production.
var Fast = Params{Time: 1, Memory: 64, Threads: 1}

// ErrMalformed reports a stored hash this package cannot read.
var ErrMalformed = errors.New("password: malformed hash")

const (
	saltLen = 16
	keyLen  = 32
)

// Hasher hashes and verifies passwords. It runs at most a few argon2 computations at once: each one
// holds Params.Memory, so a burst of logins must neither exhaust memory nor starve other requests.
type Hasher struct {
	p   Params
	sem chan struct{}
	// dummy is what an unknown user's password is checked against, so an unknown email costs the
	// same time as a wrong password and the two cannot be told apart by timing.
	dummy string
}

// New returns a Hasher using p for new hashes.
func New(p Params) *Hasher {
	h := &Hasher{p: p, sem: make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))}
	d, err := h.hash([]byte("no such user: constant-time filler"))
	if err != nil {
		panic(err) // crypto/rand failing leaves nothing sensible to do
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
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey(pw, salt, h.p.Time, h.p.Memory, h.p.Threads, keyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.Memory, h.p.Time, h.p.Threads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// Verify reports whether pw matches stored, comparing in constant time. An empty stored hash (an
// unknown user) is checked against a dummy hash, spending the same time, and reports false.
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
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, ErrMalformed
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil || p.Time == 0 || p.Threads == 0 {
		return false, ErrMalformed
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformed
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformed
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
