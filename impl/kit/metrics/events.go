package metrics

import (
	"context"
	"errors"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Version and Revision name the build in triad_build_info. The image stamps them
// (go build -ldflags "-X github.com/triadhq/triad/impl/kit/metrics.Revision=..."; Dockerfile);
// left empty, they come from what the Go toolchain recorded (the module's version, the VCS
// revision of a build inside a git checkout), else "unknown".
var (
	Version  string
	Revision string
)

// buildInfo is triad_build_info: 1, labelled with the build's version, revision and Go version.
func buildInfo() prometheus.Collector {
	version, revision, goversion := Version, Revision, "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goversion = bi.GoVersion
		if version == "" && bi.Main.Version != "" {
			version = bi.Main.Version
		}
		vcs, modified := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcs = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if revision == "" && vcs != "" {
			revision = vcs
			if modified {
				revision += "-dirty"
			}
		}
	}
	if version == "" {
		version = "unknown"
	}
	if revision == "" {
		revision = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "triad_build_info",
		Help:        "The running build: always 1, labelled with its version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goversion},
	})
	g.Set(1)
	return g
}

// Events counts named events of one kind (orders created, mails sent) under one label. Every event
// named when it was made has its series from the start, at 0, so that a rule over it never meets an
// absent series; an event not named then is not counted (the label stays bounded).
type Events struct {
	counters map[string]prometheus.Counter
}

// Events registers the counter name with help, labelled label, one series per event. A nil
// Registry (a surface mounted without metrics) returns an Events that counts nothing.
func (m *Registry) Events(name, help, label string, events ...string) Events {
	if m == nil {
		return Events{}
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	m.reg.MustRegister(vec)
	e := Events{counters: map[string]prometheus.Counter{}}
	for _, ev := range events {
		e.counters[ev] = vec.WithLabelValues(ev)
	}
	return e
}

// Add counts n events of event; a zero Events counts nothing.
func (e Events) Add(event string, n int64) {
	if c, ok := e.counters[event]; ok && n > 0 {
		c.Add(float64(n))
	}
}

// Swept counts a background sweep's run (triad_sweep_runs_total{sweep,result}) and the rows it
// removed or moved (triad_sweep_rows_total{sweep}), and on success sets the time of its last
// success (triad_sweep_last_success_timestamp_seconds{sweep}): a sweep that keeps failing, or
// stopped running, shows as a last success that grows old. It is the sweep.Observer of the
// sweeps' Leader, so only the replica that led a run reports it; a run cut short by the server's
// stop is not a failure.
func (m *Registry) Swept(name string, rows int64, at time.Time, err error) {
	if m == nil {
		return
	}
	switch {
	case err == nil:
		m.sweepRuns.WithLabelValues(name, "ok").Inc()
		m.sweepRows.WithLabelValues(name).Add(float64(rows))
		m.sweepLast.WithLabelValues(name).Set(float64(at.UnixNano()) / 1e9)
	case !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		m.sweepRuns.WithLabelValues(name, "error").Inc()
	}
}

func newSweepInstruments() (runs *prometheus.CounterVec, rows *prometheus.CounterVec, last *prometheus.GaugeVec) {
	runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "triad_sweep_runs_total",
		Help: "Runs of each background sweep (expired tokens, stale orders, ...), by result (ok, error)."}, []string{"sweep", "result"})
	rows = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "triad_sweep_rows_total",
		Help: "Rows each background sweep removed or moved."}, []string{"sweep"})
	last = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "triad_sweep_last_success_timestamp_seconds",
		Help: "Unix time of each background sweep's last successful run."}, []string{"sweep"})
	return runs, rows, last
}

// WatchUp exports up (1 when true) as the gauge name, read at each scrape: the token revocation
// listener's session, say.
func (m *Registry) WatchUp(name, help string, up func() bool) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
		if up() {
			return 1
		}
		return 0
	}))
}
