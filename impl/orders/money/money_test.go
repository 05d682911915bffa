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

func TestCommission_HalfUp(t *testing.T) {
	for _, tc := range []struct{ price, want Kopecks }{
		{10, 1},      // 0.5 kopeck rounds up
		{9, 0},       // 0.45 rounds down
		{1, 0},       // 0.05 rounds down
		{30, 2},      // 1.5 rounds up
		{12050, 603}, // 602.5 rounds up
		{10000, 500}, // exact
		{100_000_000, 5_000_000},
	} {
		if got := Commission(tc.price); got != tc.want {
			t.Errorf("Commission(%d) = %d, want %d", tc.price, got, tc.want)
		}
	}
	if got := WithCommission(12050); got != 12653 {
		t.Errorf("WithCommission(120.50) = %v", got)
	}
}

func TestKopecks_String(t *testing.T) {
	for k, want := range map[Kopecks]string{0: "0.00", 5: "0.05", 12050: "120.50", 50000: "500.00", -5: "-0.05"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(k), got, want)
		}
	}
}
