package throttle

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldAccount is the form of an account name LoginKey counts under: trimmed, NFKC-normalized and
// each character mapped to the lowercase of its uppercase, as the database's unicode_fold compares
// brands emails (migration 00130). Every spelling that logs in as one account (the KELVIN SIGN
// for K, fullwidth letters, upper case) must share that account's counter, or each would bring
// its own allowance of guesses. The result holds no upper-case ASCII.
func FoldAccount(account string) string {
	s := norm.NFKC.String(strings.TrimSpace(account))
	s = strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
	return norm.NFKC.String(s)
}
