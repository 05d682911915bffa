package patience

import (
	"testing"
	"time"
)

func TestStretch_FollowsTheLoadWithinBounds(t *testing.T) {
	for _, c := range []struct {
		loadavg string
		cpus    int
		factor  string
		want    time.Duration
	}{
		{"0.50 0.40 0.30 1/100 42", 2, "", time.Minute},             // quiet: the base
		{"9.00 5.00 1.00 1/100 42", 2, "", 270 * time.Second},       // 4.5 per CPU
		{"3.00 13.00 1.00 1/100 42", 2, "", 390 * time.Second},      // the 5-minute figure is higher
		{"90.0 80.0 1.00 1/100 42", 2, "", 10 * time.Minute},        // capped
		{"0.50 0.40 0.30 1/100 42", 2, "3", 3 * time.Minute},        // TRIAD_TEST_PATIENCE
		{"", 2, "", time.Minute},                                    // no /proc/loadavg
		{"4.00 4.00 4.00 1/100 42", 2, "nonsense", 2 * time.Minute}, // a bad factor is ignored
	} {
		if got := stretch(time.Minute, c.loadavg, c.cpus, c.factor); got != c.want {
			t.Errorf("stretch(1m, %q, %d, %q) = %v, want %v", c.loadavg, c.cpus, c.factor, got, c.want)
		}
	}
}
