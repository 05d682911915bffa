package token

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner reads the JSON subset fastClaims accepts; every method reports false on anything else.
type scanner struct {
	b string
	i int
	a *arena
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c when it comes next.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// object reads {"key": value, ...}; field reads the value of each key and returns false to give up.
func (s *scanner) object(field func(key string) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		s.ws()
		key, ok := s.raw()
		if !ok || !s.next(':') {
			return false
		}
		s.ws()
		if !field(key) {
			return false
		}
		if s.next('}') {
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// raw reads a string without escapes, which encoding/json decodes to its bytes unchanged.
func (s *scanner) raw() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	ascii := true
	for i := start; i < len(s.b); i++ {
		c := s.b[i]
		switch {
		case c == '"':
			if !ascii && !utf8.ValidString(s.b[start:i]) {
				return "", false
			}
			s.i = i + 1
			return s.b[start:i], true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

func (s *scanner) str() (string, bool) {
	s.ws()
	if b, ok := s.raw(); ok {
		return b, true
	}
	return s.escaped()
}

// escaped reads a string with escapes, as json.Marshal writes <, > and & (\u003c): the
// one-character escapes and \u of anything but a UTF-16 surrogate, which encoding/json pairs or
// replaces (those decline).
func (s *scanner) escaped() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	out := make([]byte, 0, 64)
	for i := s.i + 1; i < len(s.b); i++ {
		c := s.b[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			s.i = i + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			continue
		}
		if i+1 >= len(s.b) {
			return "", false
		}
		i++
		switch s.b[i] {
		case '"', '\\', '/':
			out = append(out, s.b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(s.b) {
				return "", false
			}
			var r rune
			for _, h := range s.b[i+1 : i+5] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return "", false
}

// int reads a non-negative integer of at most 15 digits, without leading zeros, fraction or exponent.
func (s *scanner) int() (int64, bool) {
	s.ws()
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	d := s.i - start
	if d == 0 || d > 15 || (d > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	return n, true
}

func (s *scanner) boolean() (bool, bool) {
	s.ws()
	rest := s.b[s.i:]
	switch {
	case strings.HasPrefix(rest, "true"):
		s.i += 4
		return true, true
	case strings.HasPrefix(rest, "false"):
		s.i += 5
		return false, true
	}
	return false, false
}
