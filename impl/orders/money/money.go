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

// MaxPrice bounds an order's price: 1,000,000.00 rubles.
const MaxPrice = Kopecks(100_000_000)

// Errors of Parse; the message of each is safe to show to a client.
var (
	ErrNotNumber  = errors.New("must be a decimal number")
	ErrTooPrecise = errors.New("must have at most two fractional digits")
	ErrOutOfRange = errors.New("must be between 0.01 and 1000000.00")
)

// Parse reads a JSON number (any valid notation, e.g. "120.5", "1.2e2") exactly and returns it in
// kopecks. It refuses numbers with a non-zero third fractional digit and amounts outside
// [0.01, MaxPrice]: prices are positive and bounded.
func Parse(s string) (Kopecks, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, ErrNotNumber
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() {
		return 0, ErrTooPrecise
	}
	n := r.Num()
	if !n.IsInt64() || n.Int64() < 1 || n.Int64() > int64(MaxPrice) {
		return 0, ErrOutOfRange
	}
	return Kopecks(n.Int64()), nil
}

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
