package metrics

import (
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// WatchPool adds pool to the pools whose statistics are read at each scrape, labelled pool=name:
// "primary" (DATABASE_URL) and "read" (DATABASE_READ_URL, when it is a pool of its own).
func (m *Registry) WatchPool(name string, pool *pgxpool.Pool) {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	m.pools.pools = append(m.pools.pools, namedPool{name, pool})
}

func poolDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"pool"}, nil)
}

var (
	descAcquired = poolDesc("triad_db_pool_acquired_conns", "Connections currently checked out of the pool.")
	descIdle     = poolDesc("triad_db_pool_idle_conns", "Idle connections in the pool.")
	descTotal    = poolDesc("triad_db_pool_total_conns", "Connections open in the pool.")
	descMax      = poolDesc("triad_db_pool_max_conns", "The pool's connection limit.")
	descAcqCount = poolDesc("triad_db_pool_acquires_total", "Successful connection acquisitions.")
	descAcqDur   = poolDesc("triad_db_pool_acquire_duration_seconds_total", "Total time spent acquiring connections.")
	descEmptyAcq = poolDesc("triad_db_pool_empty_acquires_total", "Acquisitions that had to wait for a connection.")
	descEmptyDur = poolDesc("triad_db_pool_empty_acquire_wait_seconds_total", "Total time acquisitions spent waiting for a connection because none was idle.")
	descCanceled = poolDesc("triad_db_pool_canceled_acquires_total", "Acquisitions whose context ended while they waited for a connection.")
)

type namedPool struct {
	name string
	pool *pgxpool.Pool
}

// poolCollector reads the statistics of every watched pool at each scrape.
type poolCollector struct {
	mu    sync.Mutex
	pools []namedPool
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAcquired, descIdle, descTotal, descMax, descAcqCount, descAcqDur, descEmptyAcq, descEmptyDur, descCanceled} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	pools := c.pools
	c.mu.Unlock()
	for _, p := range pools {
		s := p.pool.Stat()
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, p.name)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, p.name)
		}
		gauge(descAcquired, float64(s.AcquiredConns()))
		gauge(descIdle, float64(s.IdleConns()))
		gauge(descTotal, float64(s.TotalConns()))
		gauge(descMax, float64(s.MaxConns()))
		counter(descAcqCount, float64(s.AcquireCount()))
		counter(descAcqDur, s.AcquireDuration().Seconds())
		counter(descEmptyAcq, float64(s.EmptyAcquireCount()))
		counter(descEmptyDur, s.EmptyAcquireWaitTime().Seconds())
		counter(descCanceled, float64(s.CanceledAcquireCount()))
	}
}

// WatchStandbyLag exports lag (pgread.Reader.Lag: the standby's replay behind the primary, in
// bytes of WAL, as the routed reads last saw it) as triad_db_standby_replay_lag_bytes, read at each
// scrape; absent until a routed read has measured it. Call it only when a standby is configured.
func (m *Registry) WatchStandbyLag(lag func() (int64, bool)) {
	m.reg.MustRegister(standbyLag(lag))
}

var descLag = prometheus.NewDesc("triad_db_standby_replay_lag_bytes",
	"WAL bytes the standby (DATABASE_READ_URL) had still to replay when the reads that tolerate lag last compared it with the primary.", nil, nil)

type standbyLag func() (int64, bool)

func (f standbyLag) Describe(ch chan<- *prometheus.Desc) { ch <- descLag }

func (f standbyLag) Collect(ch chan<- prometheus.Metric) {
	if n, ok := f(); ok {
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(n))
	}
}

// WatchReads exports counts (the reads sent to a standby and to the primary, pgread.Reader.Counts)
// as triad_db_reads_total by db, read at each scrape.
func (m *Registry) WatchReads(counts func() (standby, primary int64)) {
	m.counterPair("triad_db_reads_total", "Reads that tolerate a standby's lag (lists, the brand catalog, avatars), by the database that served them.",
		"db", "standby", "primary", counts)
}

// counterPair registers the counter name as two series, label=first and label=second, read from
// counts at each scrape.
func (m *Registry) counterPair(name, help, label, first, second string, counts func() (int64, int64)) {
	for i, value := range []string{first, second} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: name, Help: help, ConstLabels: prometheus.Labels{label: value},
		}, func() float64 {
			a, b := counts()
			return float64([]int64{a, b}[i])
		}))
	}
}

// WatchHashQueue exports waiting (how many password hashes are queued for a worker) as the
// triad_password_hash_queue_depth gauge of surface, read at each scrape.
func (m *Registry) WatchHashQueue(surface string, waiting func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "triad_password_hash_queue_depth",
		Help:        "Password hashes waiting for a hashing worker, by surface.",
		ConstLabels: prometheus.Labels{"surface": surface},
	}, func() float64 { return float64(waiting()) }))
}

// WatchConflicts exports counts (statements PostgreSQL aborted for a deadlock and for a
// serialization failure, pgtx.Conflicts.Counts) as triad_db_conflicts_total by reason, read at
// each scrape. Each is a transaction the one retry policy ran again; a deadlock also means two
// writes locked rows in different orders, which docs/orders.md says none does.
func (m *Registry) WatchConflicts(counts func() (deadlocks, serialization int64)) {
	m.counterPair("triad_db_conflicts_total", "Statements PostgreSQL aborted for a deadlock (40P01) or a serialization failure (40001), each retried by pgtx, by reason.",
		"reason", "deadlock", "serialization_failure", counts)
}
