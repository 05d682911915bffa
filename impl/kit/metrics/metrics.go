// Package metrics provides the server's Prometheus instruments: per-request counts (with their
// status and refusal code) and latency by surface and operation, the database pools' statistics
// and the standby's lag, the business and background events, the build, and the /metrics handler. Everything hangs
// off one Registry built by the caller, so tests and embedders never share global state.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/triadhq/triad/impl/kit/web"
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
	// codes bounds the refusal code label.
	codes codeSet
	// pools are the database pools watched (WatchPool).
	pools *poolCollector
	// The background sweeps' instruments (Sweep).
	sweepRuns, sweepRows *prometheus.CounterVec
	sweepLast            *prometheus.GaugeVec
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
			Help: "HTTP requests answered, by surface, operation (operationId, else route pattern), method, status and refusal code (the error body's code, empty for none).",
		}, []string{"surface", "operation", "method", "status", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "triad_http_request_duration_seconds",
			Help:    "Time from request to the handler's return, by surface, operation, method and status class.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"surface", "operation", "method", "status_class"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "triad_login_throttle_refusals_total",
			Help: "Logins refused with 429 by the failed-login throttle, by surface.",
		}, []string{"surface"}),
		names:    map[string]string{},
		surfaces: map[string]string{},
		pools:    &poolCollector{},
	}
	m.sweepRuns, m.sweepRows, m.sweepLast = newSweepInstruments()
	m.reg.MustRegister(m.requests, m.duration, m.refusals, m.pools, buildInfo(), m.sweepRuns, m.sweepRows, m.sweepLast,
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

// Observe records one answered request. pattern is chi's route pattern ("" when nothing matched);
// code is the refusal code of its error body, "" for none (web.RefusalCode).
func (m *Registry) Observe(method, pattern string, status int, code string, took time.Duration) {
	op := Operation(pattern)
	surface := m.Surface(op)
	method = normMethod(method)
	op = m.name(method, op)
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(surface, op, method, statusLabel(status), m.codes.label(code)).Inc()
	m.duration.WithLabelValues(surface, op, method, statusClass(status)).Observe(took.Seconds())
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

// Middleware observes every request passing through it, with the status the access log reports
// (web.StatusWriter.Answered). It must sit on the root chi router so the route pattern is complete
// once the handler returns.
func (m *Registry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := web.NewStatusWriter(w, r)
		next.ServeHTTP(rec, r)
		pattern := ""
		if rc := chi.RouteContext(r.Context()); rc != nil {
			pattern = rc.RoutePattern()
		}
		// The status the access log reports too (web.StatusWriter.Answered): 499 for a client
		// that hung up before its answer was delivered, not the 200 nobody received.
		m.Observe(r.Method, pattern, rec.Answered(), web.RefusalCode(r.Context()), time.Since(start))
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

func statusClass(code int) string { return strconv.Itoa(code/100) + "xx" }

// statusLabel is the status as a label, every code outside 100-599 (none that net/http sends) being
// "other", so the label has at most 501 values whatever a handler writes.
func statusLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return statusLabels[code-100]
}

// statusLabels are the labels of 100..599, made once: a request's label costs no allocation.
var statusLabels = func() (l [500]string) {
	for i := range l {
		l[i] = strconv.Itoa(100 + i)
	}
	return l
}()

// maxCodes bounds the refusal codes the request counter tells apart. The codes are the server's own
// vocabulary (a few dozen constants), never a caller's text; the bound holds even if a handler
// ever wrote one from input.
const maxCodes = 100

// OtherCode is the code label of refusals past maxCodes distinct codes, and of codes that are not
// lower-case words (a-z, 0-9, _ and at most 64 bytes).
const OtherCode = "other"

// codeSet is the refusal codes seen so far, at most maxCodes.
type codeSet struct {
	mu   sync.RWMutex
	seen map[string]struct{}
}

// label is code as a label value: itself while the set has room or already holds it, else OtherCode.
func (c *codeSet) label(code string) string {
	if code == "" {
		return ""
	}
	c.mu.RLock()
	_, ok := c.seen[code]
	c.mu.RUnlock()
	if ok {
		return code
	}
	if !codeWord(code) {
		return OtherCode
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]struct{}{}
	}
	if len(c.seen) >= maxCodes {
		return OtherCode
	}
	c.seen[code] = struct{}{}
	return code
}

func codeWord(code string) bool {
	if len(code) > 64 {
		return false
	}
	for _, ch := range code {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}
