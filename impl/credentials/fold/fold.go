// Package fold is the one form of a name that several spellings of it share: every limit counted
// per account or per recipient keys on it, so that upper case, fullwidth letters or the KELVIN
// SIGN cannot bring a fresh allowance each.
package fold

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Name is s trimmed, NFKC-normalized and each character mapped to the lowercase of its uppercase,
// as the database's unicode_fold compares brands emails (migration 00130). The result holds no
// upper-case ASCII, so callers may prefix keys with upper-case markers no folded name can equal.
func Name(s string) string {
	s = norm.NFKC.String(strings.TrimSpace(s))
	s = strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
	return norm.NFKC.String(s)
}
