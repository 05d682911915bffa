package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sweeps are the instruments of the background sweeps (impl/platform/sweep's Leader): rows
// deleted and the time of the last run, by sweep, on the replica that led it.
type Sweeps struct {
	rows     *prometheus.CounterVec
	last     *prometheus.GaugeVec
	failures *prometheus.CounterVec
}

// NewSweeps registers the sweep instruments on m; call it once per Registry.
func NewSweeps(m *Registry) *Sweeps {
	s := &Sweeps{
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "triad_sweep_rows_total",
			Help: "Rows the background sweeps deleted on this replica while it led them, by sweep (for partition maintenance: the future months with a partition).",
		}, []string{"sweep"}),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "triad_sweep_last_run_timestamp_seconds",
			Help: "Unix time of the last sweep this replica ran as leader, successful or not, by sweep.",
		}, []string{"sweep"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "triad_sweep_failures_total",
			Help: "Sweeps this replica ran as leader that failed (logged; retried at the next interval), by sweep.",
		}, []string{"sweep"}),
	}
	m.reg.MustRegister(s.rows, s.last, s.failures)
	return s
}

// Swept implements sweep.Observer.
func (s *Sweeps) Swept(name string, rows int64, at time.Time, err error) {
	s.rows.WithLabelValues(name).Add(float64(rows))
	s.last.WithLabelValues(name).Set(float64(at.UnixNano()) / 1e9)
	if err != nil {
		s.failures.WithLabelValues(name).Inc()
	}
}
