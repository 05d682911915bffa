package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// peakSampler records the highest VmRSS of pid, sampled every 50 ms (VmHWM, read at the end,
// catches peaks between samples).
type peakSampler struct {
	pid int
	max atomic.Int64
}

func (p *peakSampler) run(ctx context.Context) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if v := rss(p.pid, "VmRSS"); v > p.max.Load() {
			p.max.Store(v)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rss reads a field of /proc/<pid>/status in bytes (0 when it cannot).
func rss(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, found := strings.Cut(sc.Text(), ":")
		if !found || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
