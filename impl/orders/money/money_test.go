package money

import "testing"

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
		if err != tc.err || got != tc.want {
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
