// Package money holds exact amounts of virtual rubles as integer kopecks and converts them to and
// from the decimal numbers of the JSON API without ever passing through floating point.
package money

import (
	"errors"
	"fmt"
	"math/big"
)

// Kopecks is an amount in hundredths of a ruble. Balances, prices and ledger entries are all Kopecks.
type Kopecks int64

// Rubles returns n whole rubles.
func Rubles(n int64) Kopecks { return Kopecks(n * 100) }

// MaxPrice bounds an order's price: 1,000,000.00 rubles, the maximum of api/orders.yaml's PriceNumber
// (impl/surfaces/orders/bounds_test.go ties the two).
const MaxPrice = Kopecks(100_000_000)

// Errors of Parse; the message of each is safe to show to a client.
var (
	ErrNotNumber  = errors.New("must be a decimal number")
	ErrTooPrecise = errors.New("must have at most two fractional digits")
	ErrOutOfRange = errors.New("must be between 0.01 and 1000000.00")
	// ErrTooSmall is the ErrOutOfRange of an amount below 0.01 (errors.Is matches both).
	ErrTooSmall = fmt.Errorf("%w", ErrOutOfRange)
)

// Parse reads a JSON number (any notation of RFC 8259, e.g. "120.5", "1.2e2", "12050E-2") exactly
// and returns it in kopecks. It refuses numbers with a non-zero third fractional digit and amounts
// outside [0.01, MaxPrice]: prices are positive and bounded. Other notations big.Rat would take
// ("0x10", "1/3") are not JSON numbers and are refused.
func Parse(s string) (Kopecks, error) {
	digits, exp, ok := scan(s)
	if !ok {
		return 0, ErrNotNumber
	}
	// Defends against exponent bombs: "1e99999" is a short literal whose value big.Rat would
	// build digit by digit (tens of milliseconds of CPU each). With n mantissa digits, a value in
	// [0.01, 1000000] has an exponent in [-n-1, n+6]: the digits can shift the point by at most n.
	// Anything beyond cannot be a price, so it is refused before any big arithmetic, as out of range.
	if exp > int64(digits)+6 {
		if s[0] == '-' {
			return 0, ErrTooSmall
		}
		return 0, ErrOutOfRange
	}
	if exp < -int64(digits)-1 {
		return 0, ErrTooSmall
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, ErrNotNumber
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() {
		return 0, ErrTooPrecise
	}
	n := r.Num()
	if n.Sign() < 0 || (n.IsInt64() && n.Int64() < 1) {
		return 0, ErrTooSmall
	}
	if !n.IsInt64() || n.Int64() > int64(MaxPrice) {
		return 0, ErrOutOfRange
	}
	return Kopecks(n.Int64()), nil
}

// maxExp caps the exponent scan reads; larger magnitudes are reported as maxExp, which is beyond
// any bound Parse applies to a literal it would parse.
const maxExp = 1 << 40

// scan checks that s is a JSON number (-? int frac? exp?) and returns the number of digits of its
// mantissa and its decimal exponent (0 without one).
func scan(s string) (digits int, exp int64, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intLen := i - start
	if intLen == 0 || intLen > 1 && s[start] == '0' {
		return 0, 0, false
	}
	digits = intLen
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == fs {
			return 0, 0, false
		}
		digits += i - fs
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		es := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			exp = min(exp*10+int64(s[i]-'0'), maxExp)
		}
		if i == es {
			return 0, 0, false
		}
		if neg {
			exp = -exp
		}
	}
	return digits, exp, i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// String formats k with exactly two fractional digits, e.g. "120.50" or "-0.05".
func (k Kopecks) String() string {
	sign := ""
	v := int64(k)
	if v < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}
