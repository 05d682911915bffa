package money

import (
	"strings"
	"testing"
)

// FuzzParse: any string is parsed or refused without panicking, accepted amounts are in range, and
// an amount written with String parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"120.5", "0.01", "1e2", "1000000.00", "0.001", "-1", "1e99999", "1e-99999", "0x10", "1/3", "12.50e-1", strings.Repeat("9", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := Parse(s)
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
