package token

import (
	"encoding/binary"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// cookieValue returns the value r.Cookie(name) gives (or "" when it finds none), without making a
// *http.Cookie of every cookie the request carries: it walks the Cookie lines the way net/http's
// readCookies does (split on ';', trim, name=value, quotes stripped, every byte a valid
// cookie-octet, the first valid one wins, nothing past 3000 cookies). It hands over to r.Cookie
// whenever it could differ: a name that is not an HTTP token, or GODEBUG's httpcookiemaxnum set.
// FuzzCookieValue holds the two to each other.
func cookieValue(r *http.Request, name string) string {
	if !isToken(name) || cookieMaxNumSet() {
		if ck, err := r.Cookie(name); err == nil {
			return ck.Value
		}
		return ""
	}
	lines := r.Header["Cookie"]
	n := 0
	for _, l := range lines {
		n += strings.Count(l, ";") + 1
	}
	if n > 3000 { // net/http's default cookie limit: past it, no cookie at all
		return ""
	}
	for _, line := range lines {
		line = trimSpace(line)
		for len(line) > 0 {
			var part string
			part, line, _ = strings.Cut(line, ";")
			part = trimSpace(part)
			k, v, _ := strings.Cut(part, "=")
			if trimSpace(k) != name {
				continue
			}
			if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			if validCookieValue(v) {
				return v
			}
		}
	}
	return ""
}

// cookieMaxNumSet reports whether GODEBUG (the environment or the main module's go:debug lines)
// sets httpcookiemaxnum, the one setting that changes which cookies net/http returns.
var cookieMaxNumSet = sync.OnceValue(func() bool {
	if strings.Contains(os.Getenv("GODEBUG"), "httpcookiemaxnum") {
		return true
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "DefaultGODEBUG" && strings.Contains(s.Value, "httpcookiemaxnum") {
				return true
			}
		}
	}
	return false
})

// trimSpace trims ASCII white space as textproto.TrimString does.
func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// validCookieValue: every byte a cookie-octet as net/http accepts it. A token is some 400 bytes,
// so eight are checked at a time (the bit tricks of "Bit Twiddling Hacks": a byte under 0x20,
// over 0x7e, or equal to '"', ';' or '\\' sets its top bit), then the rest one by one.
func validCookieValue(v string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	b := bytesOf(v)
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		under := (x - 0x20*ones) &^ x
		over := (x + (0x7f-0x7e)*ones) | x
		if (under|over|zero(x^('"'*ones))|zero(x^(';'*ones))|zero(x^('\\'*ones)))&highs != 0 {
			return false
		}
		b = b[8:]
	}
	v = v[len(v)-len(b):]
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}

// zero sets the top bit of every byte of x that is 0 (and of none that is not, once the bytes
// above one that is are looked past: here only "any" matters).
func zero(x uint64) uint64 { return (x - 0x0101010101010101) &^ x }

// isToken reports whether s is an RFC 7230 token, as a cookie name must be for net/http to return it.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
