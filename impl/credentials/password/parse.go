package password

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Bounds of the parameters Parse accepts. A stored hash's own parameters decide what checking a
// password against it costs, so a corrupt or tampered row must not be able to make one login
// allocate gigabytes or loop for minutes; the bounds leave room to raise Default several times.
const (
	MaxMemory  = 64 * 1024 // KiB: 64 MiB
	MaxTime    = 16
	MaxThreads = 16
	minSalt    = 8 // bytes, RFC 9106 §3.1 asks for at least 8 (16 recommended)
	maxSalt    = 64
	minKey     = 16
	maxKey     = 64
)

// Parse reads a stored hash in exactly the form Hash.String writes:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<key>, numbers in decimal without sign or
// leading zeros, salt and key in unpadded canonical base64. It refuses with ErrMalformed anything
// else, and parameters argon2.IDKey would panic on (t=0, p=0) or that are out of bounds (m below
// 8 KiB per lane as RFC 9106 requires, or above MaxMemory; t above MaxTime; p above MaxThreads),
// so that Verify never hands argon2 a value read from the database unchecked.
func Parse(s string) (Hash, error) {
	var h Hash
	rest, ok := strings.CutPrefix(s, "$argon2id$v=")
	if !ok {
		return h, ErrMalformed
	}
	parts := strings.Split(rest, "$")
	if len(parts) != 4 {
		return h, ErrMalformed
	}
	if v, ok := number(parts[0], argon2.Version); !ok || v != argon2.Version {
		return h, ErrMalformed
	}
	ps := strings.Split(parts[1], ",")
	if len(ps) != 3 {
		return h, ErrMalformed
	}
	m, okM := field(ps[0], "m=", MaxMemory)
	t, okT := field(ps[1], "t=", MaxTime)
	p, okP := field(ps[2], "p=", MaxThreads)
	if !okM || !okT || !okP || t < 1 || p < 1 || m < 8*p {
		return h, ErrMalformed
	}
	h.Params = Params{Time: t, Memory: m, Threads: uint8(p)}
	var okS, okK bool
	h.Salt, okS = decode(parts[2], minSalt, maxSalt)
	h.Key, okK = decode(parts[3], minKey, maxKey)
	if !okS || !okK {
		return Hash{}, ErrMalformed
	}
	return h, nil
}

// decode reads canonical unpadded base64 of minLen to maxLen bytes. The decoder skips CR and LF
// wherever they are, so the result is encoded again and compared: one value, one spelling.
func decode(s string, minLen, maxLen int) ([]byte, bool) {
	b, err := b64.DecodeString(s)
	if err != nil || len(b) < minLen || len(b) > maxLen || b64.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}

// field reads "<name><number>" with the number at most limit.
func field(s, name string, limit uint32) (uint32, bool) {
	digits, ok := strings.CutPrefix(s, name)
	if !ok {
		return 0, false
	}
	return number(digits, limit)
}

// number reads a canonical decimal (digits only, no leading zero unless it is "0") up to limit.
func number(s string, limit uint32) (uint32, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n > uint64(limit) {
		return 0, false
	}
	return uint32(n), true
}

// b64 is PHC's base64: standard alphabet, no padding, and Strict so that one value has exactly
// one spelling (unused trailing bits must be zero).
var b64 = base64.RawStdEncoding.Strict()

// Hash is a parsed PHC argon2id string.
type Hash struct {
	Params
	Salt []byte
	Key  []byte
}

// String is h in PHC format, the form Parse reads.
func (h Hash) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.Memory, h.Time, h.Threads,
		b64.EncodeToString(h.Salt), b64.EncodeToString(h.Key))
}

func (h Hash) derive(pw []byte, n uint32) []byte {
	return argon2.IDKey(pw, h.Salt, h.Time, h.Memory, h.Threads, n)
}
