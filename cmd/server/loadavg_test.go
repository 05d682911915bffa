//go:build devicefairness || abusefairness

package main

import (
	"os"
	"strings"
)

// loadAverage is the machine's 1, 5 and 15 minute load averages, for a load figure's context.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
