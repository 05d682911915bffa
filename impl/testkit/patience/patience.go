// Package patience stretches a test's waits for what runs outside it (a server starting, Prism, a
// cluster electing its leader) to how busy the machine is: a bound that holds on a quiet machine
// fails a correct tree on one shared with other jobs. The waits still poll and end as soon as what
// they wait for is there; the bound only says when to give up, and go test's package timeout stays
// the backstop.
package patience

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// maxStretch caps the load's stretch: past it, a wait that still fails is broken, not slow.
const maxStretch = 10

// Env names a further factor for every bound (a number, e.g. 3 on a slow CI runner).
const Env = "TRIAD_TEST_PATIENCE"

// Bound is base stretched for the machine's load right now: multiplied by the load average per CPU
// (the higher of the 1- and 5-minute figures) when it is above 1, at most maxStretch times, and by
// TRIAD_TEST_PATIENCE when set.
func Bound(base time.Duration) time.Duration {
	raw, _ := os.ReadFile("/proc/loadavg")
	return stretch(base, string(raw), runtime.NumCPU(), os.Getenv(Env))
}

// stretch is Bound over a /proc/loadavg line, the CPU count and the variable's value.
func stretch(base time.Duration, loadavg string, cpus int, factor string) time.Duration {
	f := 1.0
	fields := strings.Fields(loadavg)
	for i := 0; i < 2 && i < len(fields); i++ {
		if l, err := strconv.ParseFloat(fields[i], 64); err == nil && cpus > 0 {
			f = max(f, l/float64(cpus))
		}
	}
	f = min(f, maxStretch)
	if v, err := strconv.ParseFloat(factor, 64); err == nil && v > 0 {
		f *= v
	}
	return time.Duration(float64(base) * f)
}
