package token

import (
	"encoding/json"
	"time"
	"unsafe"

	"github.com/golang-jwt/jwt/v5"
)

// decodeClaims decodes a token payload. The claims this package and go-pkgz/auth write take the
// fast scanner below; anything it does not recognise, to the last byte, goes through
// encoding/json into claimsWire, so the result is always what encoding/json would give
// (FuzzFastClaims holds the two to each other on every input).
//
// b must not change afterwards: the fast scanner's strings share its memory.
func decodeClaims(b []byte) (Claims, error) {
	if c, ok := fastClaims(unsafe.String(unsafe.SliceData(b), len(b))); ok {
		return c, nil
	}
	var w claimsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Claims{}, err
	}
	return w.claims(), nil
}

// fastClaims decodes the claims object when it is made only of what this package writes: each
// known key once, spelled exactly (encoding/json also matches keys case-insensitively and lets a
// repeated key merge into the first), strings without control bytes, invalid UTF-8 or UTF-16
// surrogate escapes (which encoding/json would rewrite), keys without escapes, times and auth_time as plain non-negative integers of at
// most 15 digits (exact in a float64, so ParseFloat would give the same), booleans, a single
// audience, and attribute values that are booleans, strings, such integers or lists of strings.
// ok is false for anything else, and the caller decodes with encoding/json instead: this never
// refuses a token, it only declines to decode it.
//
// Strings are cut from src, not copied, and the user, provider, times and audience share one
// allocation: a session's claims cost three allocations instead of about fifteen.
func fastClaims(src string) (c Claims, ok bool) {
	s := scanner{b: src}
	var seen uint16
	ok = s.object(func(key string) bool {
		var bit uint16
		var ok bool
		switch key {
		case "iss":
			bit = 1 << 0
			c.Issuer, ok = s.str()
		case "sub":
			bit = 1 << 1
			c.Subject, ok = s.str()
		case "aud":
			bit = 1 << 2
			c.Audience, ok = s.aud()
		case "exp":
			bit = 1 << 3
			c.ExpiresAt, ok = s.date()
		case "nbf":
			bit = 1 << 4
			c.NotBefore, ok = s.date()
		case "iat":
			bit = 1 << 5
			c.IssuedAt, ok = s.date()
		case "jti":
			bit = 1 << 6
			c.ID, ok = s.str()
		case "user":
			bit = 1 << 7
			c.User, ok = s.user()
		case "sess_only":
			bit = 1 << 8
			c.SessionOnly, ok = s.boolean()
		case "auth_time":
			bit = 1 << 9
			c.AuthTime, ok = s.int()
		case "auth_provider":
			bit = 1 << 10
			c.AuthProvider, ok = s.provider()
		case "handshake":
			bit = 1 << 11
			c.Handshake, ok = s.handshake()
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
	if !ok || !s.end() {
		return Claims{}, false
	}
	return c, true
}

// arena holds the parts of one Claims that would each be an allocation of their own.
type arena struct {
	dates [3]jwt.NumericDate
	ndate int
	aud   [1]string
	user  User
	prov  AuthProvider
}

func (s *scanner) arena() *arena {
	if s.a == nil {
		s.a = new(arena)
	}
	return s.a
}

// date reads a time as date() converts encoding/json's float64, into the arena.
func (s *scanner) date() (*jwt.NumericDate, bool) {
	n, ok := s.int()
	a := s.arena()
	if !ok || a.ndate == len(a.dates) {
		return nil, false
	}
	d := &a.dates[a.ndate]
	a.ndate++
	// What date gives for a whole float64 (jwt.NewNumericDate's Truncate leaves a whole second as
	// it is), without its allocation.
	d.Time = time.Unix(n, 0)
	return d, true
}

// aud reads "x" or ["x"]: the single audience every token of this package carries.
func (s *scanner) aud() (jwt.ClaimStrings, bool) {
	list := s.next('[')
	a, ok := s.str()
	if !ok || (list && !s.next(']')) {
		return nil, false
	}
	ar := s.arena()
	ar.aud[0] = a
	return ar.aud[:1:1], true
}

func (s *scanner) user() (*User, bool) {
	u := &s.arena().user
	var seen uint8
	ok := s.object(func(key string) bool {
		var f *string
		var bit uint8
		switch key {
		case "name":
			f, bit = &u.Name, 1<<0
		case "id":
			f, bit = &u.ID, 1<<1
		case "picture":
			f, bit = &u.Picture, 1<<2
		case "aud":
			f, bit = &u.Audience, 1<<3
		case "ip":
			f, bit = &u.IP, 1<<4
		case "email":
			f, bit = &u.Email, 1<<5
		case "role":
			f, bit = &u.Role, 1<<6
		case "attrs":
			bit = 1 << 7
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if f == nil {
			var ok bool
			u.Attributes, ok = s.attrs()
			return ok
		}
		var ok bool
		*f, ok = s.str()
		return ok
	})
	return u, ok
}

// attrs reads the attribute map as encoding/json fills a map[string]any: a repeated key keeps its
// last value, an integer becomes a float64, a list a []any.
func (s *scanner) attrs() (map[string]any, bool) {
	m := map[string]any{}
	ok := s.object(func(key string) bool {
		var v any
		switch c := s.peek(); {
		case c == '"':
			str, ok := s.str()
			if !ok {
				return false
			}
			v = str
		case c == 't' || c == 'f':
			b, ok := s.boolean()
			if !ok {
				return false
			}
			v = b
		case c >= '0' && c <= '9':
			n, ok := s.int()
			if !ok {
				return false
			}
			v = float64(n)
		case c == '[':
			l, ok := s.strings()
			if !ok {
				return false
			}
			v = l
		default:
			return false
		}
		m[key] = v
		return true
	})
	return m, ok
}

// strings reads a list of strings into the []any encoding/json gives an interface value.
func (s *scanner) strings() ([]any, bool) {
	if !s.next('[') {
		return nil, false
	}
	l := []any{}
	if s.next(']') {
		return l, true
	}
	for {
		str, ok := s.str()
		if !ok {
			return nil, false
		}
		l = append(l, str)
		if s.next(']') {
			return l, true
		}
		if !s.next(',') {
			return nil, false
		}
	}
}

func (s *scanner) provider() (*AuthProvider, bool) {
	p := &s.arena().prov
	named := false
	ok := s.object(func(key string) bool {
		if key != "name" || named {
			return false
		}
		named = true
		var ok bool
		p.Name, ok = s.str()
		return ok
	})
	return p, ok
}

func (s *scanner) handshake() (*Handshake, bool) {
	h := &Handshake{}
	var seen uint8
	ok := s.object(func(key string) bool {
		var f *string
		var bit uint8
		switch key {
		case "state":
			f, bit = &h.State, 1<<0
		case "from":
			f, bit = &h.From, 1<<1
		case "verifier":
			f, bit = &h.Verifier, 1<<2
		case "id":
			f, bit = &h.ID, 1<<3
		case "provider":
			f, bit = &h.Provider, 1<<4
		case "session":
			bit = 1 << 5
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		var ok bool
		if f == nil {
			h.Session, ok = s.boolean()
			return ok
		}
		*f, ok = s.str()
		return ok
	})
	return h, ok
}
