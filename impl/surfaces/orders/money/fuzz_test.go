package money

import (
	"math/big"
	"strings"
	"testing"
)

// FuzzParse: any string is parsed or refused without panicking, accepted amounts are in range, an
// amount written with String parses back to itself, and Parse agrees with plain big.Rat arithmetic
// on which JSON numbers are valid prices, for all whose exponent is small enough to compute that way (so the exponent bound
// never refuses a valid price).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"120.5", "0.01", "1e2", "1000000.00", "0.001", "-1", "1e99999", "1e-99999", "0x10", "1/3", "12.50e-1", strings.Repeat("9", 40),
		"0.0000000001e8", "100e-4", "1e7", "0.1e7", "1e000000000000000000000000000006"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
		if _, exp, ok := scan(s); ok && exp > -200 && exp < 200 {
			// The error may differ (a tiny value refused by the bound is out of range, where big.Rat
			// finds it too precise); acceptance and value may not.
			if want, werr := reference(s); k != want || (err == nil) != (werr == nil) {
				t.Fatalf("Parse(%q) = %d, %v; big.Rat says %d, %v", s, k, err, want, werr)
			}
		}
		if err != nil {
			return
		}
		if k < 1 || k > MaxPrice {
			t.Fatalf("Parse(%q) = %d, out of range", s, k)
		}
		if back, err := Parse(k.String()); err != nil || back != k {
			t.Fatalf("Parse(%q) = %s, which parses back as %d, %v", s, k, back, err)
		}
	})
}

// reference is Parse without the exponent bound: exact big.Rat arithmetic on a JSON number.
func reference(s string) (Kopecks, error) {
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
