package money

import (
	"errors"
	"runtime"
	"testing"
)

func TestParse_Exact(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Kopecks
		err  error
	}{
		{"120.5", 12050, nil},
		{"120.50", 12050, nil},
		{"0.01", 1, nil},
		{"1e2", 10000, nil},
		{"19.99", 1999, nil},
		{"1000000", 100_000_000, nil},
		{"1000000.01", 0, ErrOutOfRange},
		{"0", 0, ErrOutOfRange},
		{"-5", 0, ErrOutOfRange},
		{"0.005", 0, ErrTooPrecise},
		{"1.001", 0, ErrTooPrecise},
		{"abc", 0, ErrNotNumber},
	} {
		got, err := Parse(tc.in)
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestKopecks_String(t *testing.T) {
	for k, want := range map[Kopecks]string{0: "0.00", 5: "0.05", 12050: "120.50", 50000: "500.00", -5: "-0.05"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(k), got, want)
		}
	}
}

// TestParse_Exponents: an exponent no price can have is refused as out of range, before any big
// arithmetic (a few hundred bytes, where building 1e99999 takes tens of kilobytes), while the
// widest valid exponents still parse.
func TestParse_Exponents(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Kopecks
		err  error
	}{
		{"1e99999", 0, ErrOutOfRange},
		{"1E+99999", 0, ErrOutOfRange},
		{"1e-99999", 0, ErrOutOfRange},
		{"1e99999999999999999999999999", 0, ErrOutOfRange},
		{"0e99999", 0, ErrOutOfRange},
		{"1e7", 0, ErrOutOfRange},
		{"1e6", 100_000_000, nil},
		{"0.0000000000000000000000001e25", 100, nil},
		{"1000000000000000000000e-23", 1, nil},
		{"1e-2", 1, nil},
		{"0x10", 0, ErrNotNumber},
		{"1/3", 0, ErrNotNumber},
		{".5", 0, ErrNotNumber},
		{"01", 0, ErrNotNumber},
		{"1e", 0, ErrNotNumber},
		{"1.", 0, ErrNotNumber},
		{"+1", 0, ErrNotNumber},
	} {
		got, err := Parse(tc.in)
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		_, _ = Parse("1e99999")
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 1024 {
		t.Fatalf("Parse(\"1e99999\") allocates %d bytes: the exponent reached big arithmetic", per)
	}
}

// TestParse_TooSmallIsOutOfRange: an amount below 0.01 is ErrTooSmall, which is also
// ErrOutOfRange; one above the maximum is ErrOutOfRange alone, so a caller tells the two apart.
func TestParse_TooSmallIsOutOfRange(t *testing.T) {
	for _, s := range []string{"0", "0.00", "-5", "1e-99999", "-1e99999"} {
		if _, err := Parse(s); !errors.Is(err, ErrTooSmall) || !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Parse(%q) = %v, want ErrTooSmall (an ErrOutOfRange)", s, err)
		}
	}
	for _, s := range []string{"1000000.01", "1e99999", "99999999999999999999"} {
		if _, err := Parse(s); errors.Is(err, ErrTooSmall) || !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Parse(%q) = %v, want ErrOutOfRange, not ErrTooSmall", s, err)
		}
	}
}
