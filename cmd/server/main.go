// Command server is triad: one binary serving the auth service (/auth, /avatar), the brands API
// (/api) and the orders API (/oauth, /users, /orders, /authenticated), with their specs at /openapi
// and an interactive reference at /docs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/cors"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/tracing"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set. The server keeps a few
// megabytes of long-lived heap (three parsed specs and their compiled schemas, pgx type maps), so
// under Go's default of 100 it collects every few MB of request garbage and re-marks that heap each
// time: measured under wrk, that alone cost /auth/user and /healthz about 15-20% of their
// throughput. 400 lets the heap grow to five times the live set between cycles, a few tens of MB.
const defaultGCPercent = 400

// defaultMemoryLimit is the heap size the runtime aims to stay under when GOMEMLIMIT is not set and
// no container limit is found: a flood of password hashes (19 MiB each) would otherwise grow the
// heap until the kernel kills the process, while with a limit the collector runs harder instead.
// 200 MiB leaves room below a 256 MiB budget for stacks and the runtime's own overhead.
const defaultMemoryLimit = 200 << 20

func main() {
	if os.Getenv("GOGC") == "" { // an operator's GOGC always wins
		debug.SetGCPercent(defaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" { // and so does an operator's GOMEMLIMIT
		debug.SetMemoryLimit(memoryLimit(cgroupMemoryMax()))
	}
	if err := run(context.Background(), os.Args[1:], nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// app is the server being started: its configuration, what its surfaces share (kit.Shared: the
// databases, the logger, the metrics, the token sources and revocations, what to close at
// shutdown) and its draining state.
type app struct {
	cfg Config
	// traces is tracing, nil when off (tracing.FromEnv).
	traces *tracing.Tracing
	*kit.Shared
	drain   draining
	standby *pgxpool.Pool // DATABASE_READ_URL's pool, nil without one: readiness asks it too
}

// run starts the server and blocks until ctx ends or a signal arrives. ready, when not nil, gets
// the bound address once the server accepts connections (tests use it).
func run(ctx context.Context, args []string, ready chan<- string) (err error) {
	cfg, err := LoadConfig(args)
	if err != nil {
		return err
	}
	log := newLogger(cfg)
	log.Info("config", "config", cfg, "gomaxprocs", runtime.GOMAXPROCS(0), "gomemlimit_mib", debug.SetMemoryLimit(-1)>>20)
	if len(cfg.DevDefaults) > 0 {
		log.Warn("dev mode defaults: published credentials and generous abuse limits, so a test suite against this server is served (prod keeps its own; a setting given explicitly applies in every mode)",
			"settings", strings.Join(cfg.DevDefaults, " "))
	}
	if cfg.TestIdempotencyHold != "" {
		log.Warn("TEST ONLY: keyed requests stop at an idempotency hold point; never set this in production", "env", testHoldEnv, "point", cfg.TestIdempotencyHold)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	traces, stopTracing, err := startTracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	po := platform.Options{URL: string(cfg.DatabaseURL), DirectURL: string(cfg.DatabaseDirectURL), ReadURL: string(cfg.DatabaseReadURL),
		MaxConns: cfg.DBMaxConns, AppRole: cfg.DBAppRole, Log: log}
	if traces != nil {
		po.Tracer = tracing.QueryTracer{}
	}
	dbURL := po.URL
	if cfg.Mode == "migrate" || cfg.Mode == "wait-schema" || cfg.Mode == "archive" {
		if dbURL == "" && po.DirectURL != "" {
			return runSchemaMode(ctx, cfg, po, po.DirectURL)
		}
	}
	if dbURL == "" {
		url, stop, err := platform.StartCluster(ctx, filepath.Join(cfg.DataDir, "pg"), log)
		if err != nil {
			return err
		}
		// The cluster stops whatever happens next, start-up failures included.
		defer stop()
		dbURL = url
	}

	if cfg.Mode == "migrate" || cfg.Mode == "wait-schema" || cfg.Mode == "archive" {
		return runSchemaMode(ctx, cfg, po, dbURL)
	}
	var ln net.Listener
	if cfg.Auth.URLFromListener {
		// AUTH_URL is the address listened on (dev mode without AUTH_URL), which for port 0 is known
		// only once listening, and the auth surface puts it into its callbacks and avatar links: so the
		// listener opens before the surfaces are built. Connections wait in its backlog meanwhile.
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return err
		}
		defer ln.Close() // Serve closes it too; this covers a start-up that fails before Serve
		cfg.Auth.URL = listenURL(cfg.Addr, ln.Addr())
		log.Info("AUTH_URL not set: dev mode uses the address it listens on", "auth_url", cfg.Auth.URL)
	}
	a, handler, closeApp, err := newApp(ctx, cfg, traces, po, dbURL)
	if err != nil {
		return err
	}
	defer closeApp()
	releaseStartupMemory()

	srv := &http.Server{
		Handler:           a.drain.closeWhileDraining(handler),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return err
		}
	}
	log.Info("listening", "addr", ln.Addr().String(), "mode", cfg.Mode)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, a.Metrics, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	a.drain.on.Store(true)
	log.Info("draining: /readyz answers 503 and responses close their connections while the balancer takes this server out", "drain_delay", cfg.DrainDelay)
	select {
	case err := <-serveErr:
		return err
	case <-time.After(cfg.DrainDelay):
	}
	log.Info("shutting down: finishing in-flight requests", "grace", cfg.ShutdownTimeout)
	shCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// newApp opens the databases at dbURL, migrates them and builds the surfaces' handler: all that
// run does between reading its settings and listening (the route tests serve this handler in
// process). closeApp closes what it opened.
func newApp(ctx context.Context, cfg Config, traces *tracing.Tracing, po platform.Options, dbURL string) (a *app, handler http.Handler, closeApp func(), err error) {
	log := po.Log
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	dbs, err := platform.Open(ctx, po, dbURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("database: %w", err)
	}
	closers = append(closers, dbs.Close)
	pool := dbs.Pool
	reg := metrics.New()
	reg.WatchPool("primary", pool)
	if dbs.Read != dbs.Pool {
		reg.WatchPool("read", dbs.Read)
	}
	if dbs.Reads.HasStandby() {
		reg.WatchStandbyLag(dbs.Reads.Lag)
	}
	reg.WatchConflicts(dbs.Conflicts.Counts)
	a = &app{cfg: cfg, traces: traces, Shared: kit.NewShared(kit.Shared{Pool: pool, Reads: dbs.Reads, Direct: dbs.Direct, Log: log, Metrics: reg,
		Dev: cfg.IsDev(), Logins: cfg.Logins, DeviceKey: []byte(cfg.Auth.Secret), SecureCookies: secureCookies(cfg.Auth)})}
	if dbs.Read != dbs.Pool {
		a.standby = dbs.Read
	}
	a.IdempotencyHold = a.idempotencyHold()
	reg.WatchReads(a.Reads.Counts)
	reg.WatchUp("triad_token_revocation_listener_up", "1 while the token revocation listener's session listens on every channel (tokens are cached), 0 while it is down (every request asks the database).",
		a.Revocations.Listening)
	closers = append(closers, a.Close)
	// Migrations and the surfaces' start-up data (dev data, the first admin) run under one lock
	// over the database: replicas starting together take turns, and each finds the work done. A
	// database already at the newest schema is only read, so a role that may only read and write
	// rows starts once `server -mode migrate` has run.
	err = platform.Migrated(ctx, dbs.Direct, log, func(context.Context) error {
		h, err := a.routes()
		handler = h
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	// The listener starts once the surfaces have registered their channels, so its first session
	// listens on all of them (a channel registered later is listened to as well, a moment later).
	a.OnClose(a.Revocations.Start())
	return a, handler, closeAll, nil
}

// memoryLimit is the default soft memory limit: 80% of the container's limit when there is one (the
// rest is for stacks, buffers and the runtime), otherwise defaultMemoryLimit.
func memoryLimit(containerMax int64) int64 {
	if containerMax > 0 {
		return containerMax / 5 * 4
	}
	return defaultMemoryLimit
}

// cgroupMemoryMax reads the memory limit of this process's cgroup, or 0 when there is none.
func cgroupMemoryMax() int64 { return cgroupMemoryMaxIn("/sys/fs/cgroup") }

// cgroupMemoryMaxIn reads the memory limit under the cgroup mount root: cgroup v2's memory.max
// ("max": none), else cgroup v1's memory/memory.limit_in_bytes, where no limit reads as a number
// near 2^63 (nodes still on cgroup v1 set the pod's limit there).
func cgroupMemoryMaxIn(root string) int64 {
	for _, f := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "unlimited"
			return 0
		}
		return n
	}
	return 0
}

// corsOrigins is the configured CORS_ORIGINS, plus the local dev-server origins in dev mode. It is
// all LoadConfig checks: parsing the specs for the methods and headers (corsPolicy) would cost
// every LoadConfig half a second or more, and the embedded specs cannot differ between calls.
func corsOrigins(cfg Config) (cors.Policy, error) {
	var dev []string
	if cfg.IsDev() {
		dev = cors.DevOrigins()
	}
	return cors.Parse(cfg.CORSOrigins, dev...)
}

// corsPolicy is corsOrigins allowing the methods and headers the specs declare (cors.FromSpecs)
// and the request id, which the shared middleware reads and sends on every route.
func corsPolicy(cfg Config, specs []*openapi3.T) (cors.Policy, error) {
	p, err := corsOrigins(cfg)
	if err != nil {
		return p, err
	}
	return p.With(cors.FromSpecs(specs, web.RequestIDHeader)), nil
}

// routes builds the root router: shared middleware, platform endpoints, then each surface.
func (a *app) routes() (http.Handler, error) {
	specs, err := published()
	if err != nil {
		return nil, err
	}
	origins, err := corsPolicy(a.cfg, specs)
	if err != nil {
		return nil, err
	}
	screenInput := inputScreen(specs)
	for i, spec := range specs {
		a.Metrics.NameOperations(specNames[i], spec)
	}
	accessLevel := slog.LevelInfo
	if a.cfg.IsDev() {
		accessLevel = slog.LevelDebug
	}
	// validate has refused a malformed list.
	proxies, err := web.ParseTrustedProxies(a.cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	for _, p := range web.WideProxies(proxies) {
		a.Log.Warn("TRUSTED_PROXIES names a range wider than a /24 (IPv4) or /64 (IPv6): every host in it may forge a client address in X-Forwarded-For; list the reverse proxies' own addresses or subnet",
			"prefix", p.String())
	}
	pc := &proxyCheck{trusted: proxies, log: a.Log}
	// A peer sending X-Forwarded-For without being trusted is noticed first (proxyCheck), while
	// RemoteAddr is still its own. The client address is settled next (behind trusted proxies), so the access log and the
	// login throttle see the same one. Metrics and CORS run outermost (after request ids): the
	// metrics read the complete route pattern once the handler returns, and see recovered panics'
	// 500s. Input screening runs for every surface, after the shared layers, before routing.
	outer := []func(http.Handler) http.Handler{pc.middleware, web.ClientAddr(proxies), router.HashingClient, a.Metrics.Middleware, origins.Middleware}
	if a.traces != nil {
		// First, while RemoteAddr is still the peer's own: a trusted proxy's traceparent is
		// continued, anyone else's ignored.
		trusted := func(peer string) bool { return web.Trusts(proxies, peer) }
		outer = append([]func(http.Handler) http.Handler{a.traces.Middleware(trusted, a.Metrics.OperationName, web.SetTraceID)}, outer...)
	}
	r := router.New(router.Options{Log: a.Log, AccessLog: true, AccessLevel: accessLevel, BodyLimit: a.cfg.BodyLimit,
		Outer:      outer,
		Middleware: []func(http.Handler) http.Handler{screenInput}})
	a.SweepSharedTables()

	r.Get("/healthz", healthz) // reached only by methods other than GET, which it refuses with 405
	r.Get("/readyz", a.readyz(pc))
	if a.cfg.MetricsAddr == "" { // else on a listener of its own (serveMetrics)
		r.Method(http.MethodGet, "/metrics", a.Metrics.Handler())
	}
	mountDocs(r, a.cfg.IsDev())
	if a.cfg.IsDev() {
		resets := &devResets{}
		a.DevReset = resets.add // kit.Deps.DevReset of every surface
		r.Method(http.MethodPost, "/dev/reset", resets)
	}

	for _, s := range surfaces {
		if err := s.mount(a)(a.Deps(s.name), r); err != nil {
			return nil, fmt.Errorf("mounting %s: %w", s.name, err)
		}
	}
	if err := a.Tokens.Seal(); err != nil {
		return nil, err
	}
	return livenessFirst(r), nil
}

// runSchemaMode is `-mode migrate`, `-mode wait-schema` or `-mode archive` over the direct URL
// (DATABASE_DIRECT_URL, else primary): none serves.
func runSchemaMode(ctx context.Context, cfg Config, po platform.Options, primary string) error {
	switch cfg.Mode {
	case "wait-schema":
		return platform.WaitSchema(ctx, po, primary)
	case "archive":
		return runArchive(ctx, cfg.Archive, po, primary)
	}
	return platform.Migrate(ctx, po, primary)
}

// secureCookies reports whether cookies are to be marked Secure: asked for, or the public URL is
// https (the browser then always talks TLS).
func secureCookies(c AuthConfig) bool {
	return c.SecureCookies || strings.HasPrefix(strings.ToLower(c.URL), "https://")
}

// healthz is the liveness probe: the process serves HTTP. It needs nothing but the process.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}

// livenessFirst answers GET /healthz ahead of the shared middleware (request id, metrics, CORS,
// access log, recovery, input screening), which exists for the API surfaces: a probe that a
// kubelet sends every few seconds would otherwise be one access-log line and one metrics sample
// each time, and pay for all of it (the benchmark holds /healthz to 0.9x of a bare chi handler).
// So /healthz is neither logged nor metered; /readyz, which reaches the database, still is.
// Every other request, /healthz with another method included, goes through next.
func livenessFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/healthz" {
			healthz(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
