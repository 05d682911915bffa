// Package metrics provides the server's Prometheus instruments: per-request counts and latency by
// surface and operation, the database pool's statistics, and the /metrics handler. Everything hangs
// off one Registry built by the caller, so tests and embedders never share global state.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Unmatched is the operation label of requests no route matched: the raw path is never a label,
// since it would carry ids and let any caller grow the series without bound.
const Unmatched = "unmatched"

// Registry holds the server's instruments.
type Registry struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	refusals *prometheus.CounterVec
	// names maps "METHOD /route/{pattern}" to the spec's operationId; filled before serving.
	names map[string]string
	// surfaces maps a path's first segment ("orders", "api") to the surface whose spec has paths
	// under it; filled before serving.
	surfaces map[string]string
}

// New builds a registry with the request instruments and the Go runtime and process collectors.
func New() *Registry {
	m := &Registry{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "triad_http_requests_total",
			Help: "HTTP requests answered, by surface, operation (operationId, else route pattern), method and status class.",
		}, []string{"surface", "operation", "method", "status_class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "triad_http_request_duration_seconds",
			Help:    "Time from request to the handler's return, by surface, operation and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"surface", "operation", "method"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "triad_login_throttle_refusals_total",
			Help: "Logins refused with 429 by the failed-login throttle, by surface.",
		}, []string{"surface"}),
		names:    map[string]string{},
		surfaces: map[string]string{},
	}
	m.reg.MustRegister(m.requests, m.duration, m.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// NameOperations labels the operations of spec with their operationId instead of their route
// pattern, for the routes whose chi pattern is the spec's path (spec paths and chi patterns share the
// {param} syntax), and every route under the first path segments of the spec's paths with
// surface. Call it before serving: the maps are read without a lock.
func (m *Registry) NameOperations(surface string, spec *openapi3.T) {
	for path, item := range spec.Paths.Map() {
		m.surfaces[firstSegment(path)] = surface
		for method, op := range item.Operations() {
			if op.OperationID != "" {
				m.names[method+" "+path] = op.OperationID
			}
		}
	}
}

// LoginRefused returns the hook a login throttle calls when it refuses a login of surface.
func (m *Registry) LoginRefused(surface string) func() {
	c := m.refusals.WithLabelValues(surface)
	return c.Inc
}

// Observe records one answered request. pattern is chi's route pattern ("" when nothing matched).
func (m *Registry) Observe(method, pattern string, status int, took time.Duration) {
	op := Operation(pattern)
	surface := m.Surface(op)
	method = normMethod(method)
	op = m.name(method, op)
	m.requests.WithLabelValues(surface, op, method, statusClass(status)).Inc()
	m.duration.WithLabelValues(surface, op, method).Observe(took.Seconds())
}

// OperationName is the name of the operation a request of method matched by chi's route pattern
// ("" when nothing matched) belongs to: its operationId where the spec names one (NameOperations),
// else its route pattern, or Unmatched. The request's trace span bears it too.
func (m *Registry) OperationName(method, pattern string) string {
	return m.name(normMethod(method), Operation(pattern))
}

func (m *Registry) name(method, op string) string {
	if id, ok := m.names[method+" "+op]; ok {
		return id
	}
	return op
}

// Middleware observes every request passing through it. It must sit on the root chi router so the
// route pattern is complete once the handler returns.
func (m *Registry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		pattern := ""
		if rc := chi.RouteContext(r.Context()); rc != nil {
			pattern = rc.RoutePattern()
		}
		m.Observe(r.Method, pattern, rec.status, time.Since(start))
	})
}

// Operation turns a chi route pattern into the operation label: the pattern with chi's mount
// wildcards trimmed, or Unmatched when no route matched (a mounted router's catch-all included).
func Operation(pattern string) string {
	if pattern == "" || strings.HasSuffix(pattern, "/*") || pattern == "/*" {
		return Unmatched
	}
	return pattern
}

// Platform is the surface label of the server's own routes (probes, /metrics, /docs): those under
// no spec's paths.
const Platform = "platform"

// Surface names the surface an operation belongs to: the one whose spec has paths under the
// operation's first path segment (NameOperations), else Platform.
func (m *Registry) Surface(op string) string {
	if op == Unmatched {
		return Unmatched
	}
	if s, ok := m.surfaces[firstSegment(op)]; ok {
		return s
	}
	return Platform
}

// firstSegment is the first segment of a path: "orders" of /orders/{id}/take.
func firstSegment(path string) string {
	seg := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg = seg[:i]
	}
	return seg
}

// normMethod keeps the method label bounded: unknown verbs collapse to "other".
func normMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

func statusClass(code int) string {
	if code == 0 {
		code = http.StatusOK
	}
	return strconv.Itoa(code/100) + "xx"
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController and the error writer reach the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// WatchPool registers a collector reading pool's statistics at each scrape.
func (m *Registry) WatchPool(pool *pgxpool.Pool) { m.reg.MustRegister(poolCollector{pool}) }

var (
	descAcquired = prometheus.NewDesc("triad_db_pool_acquired_conns", "Connections currently checked out of the pool.", nil, nil)
	descIdle     = prometheus.NewDesc("triad_db_pool_idle_conns", "Idle connections in the pool.", nil, nil)
	descTotal    = prometheus.NewDesc("triad_db_pool_total_conns", "Connections open in the pool.", nil, nil)
	descMax      = prometheus.NewDesc("triad_db_pool_max_conns", "The pool's connection limit.", nil, nil)
	descAcqCount = prometheus.NewDesc("triad_db_pool_acquires_total", "Successful connection acquisitions.", nil, nil)
	descAcqDur   = prometheus.NewDesc("triad_db_pool_acquire_duration_seconds_total", "Total time spent acquiring connections.", nil, nil)
	descEmptyAcq = prometheus.NewDesc("triad_db_pool_empty_acquires_total", "Acquisitions that had to wait for a connection.", nil, nil)
)

type poolCollector struct{ pool *pgxpool.Pool }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAcquired, descIdle, descTotal, descMax, descAcqCount, descAcqDur, descEmptyAcq} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(descAcquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(descIdle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(descTotal, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(descMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(descAcqCount, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(descAcqDur, prometheus.CounterValue, s.AcquireDuration().Seconds())
	ch <- prometheus.MustNewConstMetric(descEmptyAcq, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
}

// WatchReads exports counts (the reads sent to a standby and to the primary, pgread.Reader.Counts)
// as triad_db_reads_total by db, read at each scrape.
func (m *Registry) WatchReads(counts func() (standby, primary int64)) {
	for _, db := range []string{"standby", "primary"} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "triad_db_reads_total",
			Help:        "Reads that tolerate a standby's lag (lists, the brand catalog, avatars), by the database that served them.",
			ConstLabels: prometheus.Labels{"db": db},
		}, func() float64 {
			s, p := counts()
			if db == "standby" {
				return float64(s)
			}
			return float64(p)
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
	for _, reason := range []string{"deadlock", "serialization_failure"} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "triad_db_conflicts_total",
			Help:        "Statements PostgreSQL aborted for a deadlock (40P01) or a serialization failure (40001), each retried by pgtx, by reason.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 {
			d, s := counts()
			if reason == "deadlock" {
				return float64(d)
			}
			return float64(s)
		}))
	}
}
