package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/tracing"
	"github.com/triadhq/triad/impl/platform"
	"github.com/triadhq/triad/impl/platform/pgcluster"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestMain runs this package's parallel tests four at a time (at least; -parallel, when given,
// decides): most of them wait on a server process, PostgreSQL or a login throttle's interval more
// than on the CPU, and go test's default of GOMAXPROCS left them two at a time on 2 cores, so the
// package took longest of the run.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && runtime.GOMAXPROCS(0) < waitingTests {
		_ = flag.Set("test.parallel", strconv.Itoa(waitingTests))
	}
	dbtest.Main(m)
}

// waitingTests is how many of this package's parallel tests run at once by default.
const waitingTests = 4

// testServer runs the whole server (run) with args and returns its base URL and a stop function
// that shuts it down and returns run's error.
func testServer(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	args = append([]string{"-addr", "127.0.0.1:0", "-log-level", "warn"}, args...)
	go func() { done <- run(ctx, args, ready) }()
	select {
	case addr := <-ready:
		stopped := false
		stop := func() error {
			if stopped {
				return nil
			}
			stopped = true
			cancel()
			select {
			case err := <-done:
				return err
			case <-time.After(60 * time.Second):
				t.Fatal("server did not stop within 60s")
				return nil
			}
		}
		t.Cleanup(func() { _ = stop() })
		return "http://" + addr, stop
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(patience.Bound(180 * time.Second)):
		cancel()
		t.Fatalf("server did not start within %v", patience.Bound(180*time.Second))
	}
	return "", nil
}

// routerServer serves, from an httptest server in this process, the handler run builds for args
// (newApp over -database-url, which it needs): the route tests' server, without run's signals,
// drain and shutdown, which the process tests hold. Its stop closes the server and the app.
func routerServer(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	cfg, err := LoadConfig(append([]string{"-addr", "127.0.0.1:0", "-log-level", "warn"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL == "" {
		t.Fatal("routerServer needs -database-url (a managed cluster is run's, held by the process tests)")
	}
	log := newLogger(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	traces, stopTracing, err := startTracing(ctx, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if cfg.Auth.URLFromListener {
		cfg.Auth.URL = listenURL(cfg.Addr, ln.Addr())
	}
	po := platform.Options{URL: string(cfg.DatabaseURL), DirectURL: string(cfg.DatabaseDirectURL), ReadURL: string(cfg.DatabaseReadURL),
		MaxConns: cfg.DBMaxConns, AppRole: cfg.DBAppRole, Log: log}
	if traces != nil {
		po.Tracer = tracing.QueryTracer{}
	}
	_, handler, closeApp, err := newApp(ctx, cfg, traces, po, po.URL)
	if err != nil {
		ln.Close()
		stopTracing()
		cancel()
		t.Fatalf("server did not start: %v", err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: handler}}
	srv.Start()
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			srv.Close()
			closeApp()
			stopTracing()
			cancel()
		}
		return nil
	}
	t.Cleanup(func() { _ = stop() })
	return srv.URL, stop
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func TestServer_PlatformEndpoints(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t))
	tests := []struct {
		name, method, path string
		want               int
		wantType, wantBody string
		// bare: answered ahead of the shared middleware, so without a request id (the liveness probe)
		bare bool
	}{
		{"health", http.MethodGet, "/healthz", 200, "application/json", `"status":"ok"`, true},
		{"readiness", http.MethodGet, "/readyz", 200, "application/json", `"database":"ok"`, false},
		{"orders spec", http.MethodGet, "/openapi/orders.yaml", 200, "application/yaml", "openapi: 3.0.3", false},
		{"brands spec", http.MethodGet, "/openapi/brands.yaml", 200, "application/yaml", "openapi: 3.0.3", false},
		{"auth spec", http.MethodGet, "/openapi/auth.yaml", 200, "application/yaml", "openapi: 3.0.3", false},
		{"interactive docs", http.MethodGet, "/docs/", 200, "text/html", "swagger", false},
		{"unknown route is JSON 404", http.MethodGet, "/no/such/route", 404, "application/json", `"code":"not_found"`, false},
		{"wrong method is JSON 405", http.MethodDelete, "/healthz", 405, "application/json", `"code":"method_not_allowed"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.want, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
				t.Fatalf("Content-Type = %q, want %q", ct, tc.wantType)
			}
			if !strings.Contains(strings.ToLower(string(body)), strings.ToLower(tc.wantBody)) {
				t.Fatalf("body does not contain %q: %.300s", tc.wantBody, body)
			}
			if id := resp.Header.Get("X-Request-Id"); (id == "") != tc.bare {
				t.Fatalf("X-Request-Id %q; want one unless answered ahead of the middleware (bare=%v)", id, tc.bare)
			}
		})
	}
}

// The published specs are the bundles in gen/openapi/ (api/ with the shared components copied in),
// byte for byte.
func TestServer_SpecsServedVerbatim(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t))
	for _, name := range specNames {
		want, err := os.ReadFile(filepath.Join("..", "..", "gen", "openapi", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, got := get(t, base+"/openapi/"+name+".yaml"); got != string(want) {
			t.Fatalf("/openapi/%s.yaml differs from gen/openapi/%s.yaml", name, name)
		}
		// The same document as JSON, for tools that read no YAML: it loads to the same spec.
		status, header, asJSON := get(t, base+"/openapi/"+name+".json")
		fromYAML, err := openapi3.NewLoader().LoadFromData(want)
		if err != nil {
			t.Fatal(err)
		}
		fromJSON, err := openapi3.NewLoader().LoadFromData([]byte(asJSON))
		if status != http.StatusOK || header.Get("Content-Type") != "application/json" || err != nil || !json.Valid([]byte(asJSON)) {
			t.Fatalf("/openapi/%s.json: %d %s %v", name, status, header.Get("Content-Type"), err)
		}
		a, _ := json.Marshal(fromYAML)
		b, _ := json.Marshal(fromJSON)
		if string(a) != string(b) {
			t.Fatalf("/openapi/%s.json is not the document of api/%s.yaml", name, name)
		}
		// In the YAML's key order (api.TestJSON_KeepsTheYAMLsOrder), so a generator builds the same client.
		if ordered, err := api.JSON(want); err != nil || asJSON != string(ordered) {
			t.Fatalf("/openapi/%s.json is not api.JSON of the YAML (%v)", name, err)
		}
	}
}

// Without DATABASE_URL the server runs its own PostgreSQL: /readyz follows the database going away
// and coming back, shutdown stops the cluster, and a second start finds the data again.
func TestServer_ManagedPostgres(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	pgDir := filepath.Join(dataDir, "pg")
	base, stop := testServer(t, "-data-dir", dataDir)

	if code, _, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz = %d %s, want 200", code, body)
	}
	ctx := context.Background()
	dbURL := clusterURL(t, pgDir)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO platform_info (key, value) VALUES ('marker', 'kept')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	// A second owner of the same folder is refused, and the first keeps its database.
	if _, err := pgcluster.Start(ctx, pgDir, pgcluster.Options{}); !errors.Is(err, pgcluster.ErrInUse) {
		t.Fatalf("second owner of %s: %v, want ErrInUse", pgDir, err)
	}
	// kill -9 of the postmaster under the running server: readiness says so while it is down, and
	// the server's supervisor brings it back without a restart of the server.
	pidFile, err := os.ReadFile(filepath.Join(pgDir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		code, _, body := get(t, base+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "unreachable")
	})
	waitFor(t, func() bool { code, _, _ := get(t, base+"/readyz"); return code == http.StatusOK })

	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pgDir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatal("PostgreSQL still running after the server stopped")
	}

	_, stop2 := testServer(t, "-data-dir", dataDir)
	conn, err = pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	err = conn.QueryRow(ctx, "SELECT value FROM platform_info WHERE key = 'marker'").Scan(&v)
	conn.Close(ctx)
	if err != nil || v != "kept" {
		t.Fatalf("after restart: value=%q err=%v, want the row written in the first run", v, err)
	}
	if err := stop2(); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
}

func clusterURL(t *testing.T, pgDir string) string {
	t.Helper()
	return "postgres://postgres@/triad?host=" + pgDir + "&sslmode=disable"
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience.Bound(60 * time.Second))
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time (patience.Bound of 60s)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A shutdown signal lets a request that is already running finish and answer. Not parallel: it
// adds a slow route to the package's surface list for its own server.
func TestServer_GracefulShutdownFinishesInFlight(t *testing.T) {
	started := make(chan struct{})
	saved := surfaces
	surfaces = append(surfaces[:len(surfaces):len(surfaces)], kitSurface("slow", func(_ kit.Deps, r chi.Router) error {
		r.Get("/test/slow", func(w http.ResponseWriter, _ *http.Request) {
			close(started)
			time.Sleep(500 * time.Millisecond)
			_, _ = w.Write([]byte("finished"))
		})
		return nil
	}))
	t.Cleanup(func() { surfaces = saved })

	base, stop := testServer(t, "-database-url", dbtest.NewURL(t))
	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/test/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-started
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	r := <-got
	if r.err != nil || r.body != "finished" {
		t.Fatalf("in-flight request: body=%q err=%v, want it to finish", r.body, r.err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("server still accepts requests after shutdown")
	}
}

func TestLoadConfig(t *testing.T) {
	for _, k := range []string{"MODE", "ORDERS_CLIENT_ID", "ORDERS_CLIENT_SECRET", "AUTH_SECRET", "BRANDS_ADMIN_EMAIL", "BRANDS_ADMIN_PASSWORD", "ADDR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Run("dev mode fills documented defaults", func(t *testing.T) {
		c, err := LoadConfig(nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Addr != ":8080" || c.Orders.ClientID != devOrdersClientID || string(c.Auth.Secret) != devAuthSecret {
			t.Fatalf("dev defaults not applied: %+v", c)
		}
	})
	t.Run("prod mode refuses to start without secrets", func(t *testing.T) {
		_, err := LoadConfig([]string{"-mode", "prod"})
		if err == nil {
			t.Fatal("prod mode without secrets started")
		}
		for _, want := range []string{"ORDERS_CLIENT_ID", "AUTH_SECRET"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	})
	t.Run("malformed environment values stop the start, naming each", func(t *testing.T) {
		t.Setenv("ORDERS_TOKEN_TTL", "1d")
		t.Setenv("BODY_LIMIT", "1MB")
		t.Setenv("AUTH_SECURE_COOKIES", "yes please")
		_, err := LoadConfig(nil)
		if err == nil {
			t.Fatal("malformed values were replaced by defaults")
		}
		for _, want := range []string{`ORDERS_TOKEN_TTL="1d"`, `BODY_LIMIT="1MB"`, `AUTH_SECURE_COOKIES="yes please"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	})
	t.Run("a negative pool size stops the start", func(t *testing.T) {
		if _, err := LoadConfig([]string{"-db-max-conns", "-1"}); err == nil || !strings.Contains(err.Error(), "DB_MAX_CONNS") {
			t.Fatalf("error = %v, want it to name DB_MAX_CONNS", err)
		}
	})
	t.Run("ports and the avatar size out of range stop the start", func(t *testing.T) {
		tests := []struct {
			flag, value, want string
		}{
			{"-auth-dev-port", "-1", "AUTH_DEV_PORT=-1"},
			{"-auth-dev-port", "65536", "AUTH_DEV_PORT=65536"},
			{"-auth-smtp-port", "0", "AUTH_SMTP_PORT=0"},
			{"-auth-smtp-port", "70000", "AUTH_SMTP_PORT=70000"},
			{"-auth-avatar-resize", "-5", "AUTH_AVATAR_RESIZE=-5"},
			{"-auth-avatar-resize", "40960", "AUTH_AVATAR_RESIZE=40960"},
			{"-auth-confirm-per-recipient", "0", "AUTH_CONFIRM_PER_RECIPIENT=0"},
			{"-auth-confirm-per-client", "-1", "AUTH_CONFIRM_PER_CLIENT=-1"},
			{"-auth-confirm-window", "0s", "AUTH_CONFIRM_WINDOW=0s"},
		}
		for _, tc := range tests {
			if _, err := LoadConfig([]string{tc.flag, tc.value}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: error = %v, want it to say %q", tc.flag, tc.value, err, tc.want)
			}
		}
		for _, args := range [][]string{
			{"-auth-dev-port", "0"}, {"-auth-dev-port", "65535"}, {"-auth-smtp-port", "465"},
			{"-auth-avatar-resize", "0"}, {"-auth-avatar-resize", "256"}, {"-auth-avatar-resize", "4096"},
		} {
			if _, err := LoadConfig(args); err != nil {
				t.Errorf("%v refused: %v", args, err)
			}
		}
		// From the environment too: a port that is no number is named as such.
		t.Setenv("AUTH_SMTP_PORT", "smtp")
		if _, err := LoadConfig(nil); err == nil || !strings.Contains(err.Error(), `AUTH_SMTP_PORT="smtp"`) {
			t.Errorf("AUTH_SMTP_PORT=smtp: error = %v", err)
		}
	})
	t.Run("a cookie domain browsers would drop stops the start", func(t *testing.T) {
		const api = "https://api.example.com"
		for _, tc := range []struct{ url, domain, want string }{
			{api, "other.com", "does not cover"},
			{api, "ample.com", "does not cover"},
			{api, "https://example.com", "want a host name"},
			{api, "example.com:443", "want a host name"},
			{"http://127.0.0.1:8080", "0.0.1", "does not cover"},
		} {
			_, err := LoadConfig([]string{"-auth-url", tc.url, "-auth-cookie-domain", tc.domain})
			if err == nil || !strings.Contains(err.Error(), "AUTH_COOKIE_DOMAIN") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s on %s: error = %v, want it to say %q", tc.domain, tc.url, err, tc.want)
			}
		}
		for _, tc := range []struct{ url, domain string }{
			{api, "example.com"}, {api, ".example.com"}, {api, "api.example.com"}, {api, "Example.COM"},
			{"http://127.0.0.1:8080", "127.0.0.1"},
		} {
			if _, err := LoadConfig([]string{"-auth-url", tc.url, "-auth-cookie-domain", tc.domain}); err != nil {
				t.Errorf("%s on %s refused: %v", tc.domain, tc.url, err)
			}
		}
	})
	t.Run("a malformed trusted proxy stops the start", func(t *testing.T) {
		_, err := LoadConfig([]string{"-trusted-proxies", "10.0.0.0/8,proxy.internal"})
		if err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") || !strings.Contains(err.Error(), "proxy.internal") {
			t.Fatalf("error = %v, want it to name TRUSTED_PROXIES and the bad entry", err)
		}
	})
	t.Run("prod refuses published, dev-default and short secrets", func(t *testing.T) {
		good := []string{"-mode", "prod", "-orders-client-id", "prod-client", "-orders-client-secret", "a-client-secret-of-our-own-42",
			"-auth-secret", strings.Repeat("k", 40)}
		if _, err := LoadConfig(good); err != nil {
			t.Fatalf("good prod config refused: %v", err)
		}
		tests := []struct {
			name, flag, value, want string
		}{
			{"dev client secret", "-orders-client-secret", devOrdersClientSecret, "ORDERS_CLIENT_SECRET is a published"},
			{"short client secret", "-orders-client-secret", "short-secret", "ORDERS_CLIENT_SECRET is 12 characters"},
			{"dev auth secret", "-auth-secret", devAuthSecret, "AUTH_SECRET is a published"},
			{"placeholder auth secret", "-auth-secret", "please-change-me-before-going-live-0000", "AUTH_SECRET is a published"},
			{"short auth secret", "-auth-secret", strings.Repeat("k", 31), "AUTH_SECRET is 31 characters"},
			{"documented brands admin password", "-brands-admin-password", "Admin-Password", "BRANDS_ADMIN_PASSWORD is a published"},
			{"short brands admin password", "-brands-admin-password", "hunter2", "BRANDS_ADMIN_PASSWORD is 7 characters"},
			{"documented auth admin password", "-auth-admin-passwd", "demo-password", "AUTH_ADMIN_PASSWD is a published"},
			{"short auth admin password", "-auth-admin-passwd", "12345", "AUTH_ADMIN_PASSWD is 5 characters"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				args := append(append([]string{}, good...), tc.flag, tc.value)
				if tc.flag == "-brands-admin-password" {
					args = append(args, "-brands-admin-email", "boss@example.com")
				}
				_, err := LoadConfig(args)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want it to say %q", err, tc.want)
				}
				if strings.Contains(err.Error(), tc.value) {
					t.Fatalf("error %q repeats the secret", err)
				}
			})
		}
		// Dev mode keeps its documented values.
		if _, err := LoadConfig([]string{"-auth-admin-passwd", "demo-password"}); err != nil {
			t.Fatalf("dev mode refused a demo value: %v", err)
		}
	})
	t.Run("environment feeds flags, flags win", func(t *testing.T) {
		t.Setenv("ADDR", ":9999")
		c, err := LoadConfig(nil)
		if err != nil || c.Addr != ":9999" {
			t.Fatalf("ADDR from env: %q %v", c.Addr, err)
		}
		c, err = LoadConfig([]string{"-addr", ":7777"})
		if err != nil || c.Addr != ":7777" {
			t.Fatalf("flag over env: %q %v", c.Addr, err)
		}
	})
	t.Run("secrets are masked in logs", func(t *testing.T) {
		c, err := LoadConfig([]string{"-mode", "prod", "-orders-client-id", "id", "-orders-client-secret", "s3cr3t-value-of-the-client",
			"-auth-secret", strings.Repeat("k", 40), "-database-url", "postgres://u:pw-in-dsn@h/db",
			"-auth-avatar-store", "mongodb://ava:pw-in-store-uri@mongo.internal:27017/?ava_db=pics"})
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		newLoggerTo(&sb, c).Info("config", "config", c)
		for _, leak := range []string{"s3cr3t-value-of-the-client", strings.Repeat("k", 40), "pw-in-dsn", "pw-in-store-uri"} {
			if strings.Contains(sb.String(), leak) {
				t.Fatalf("log line leaks a secret: %s", sb.String())
			}
		}
		// The store's location stays visible: the operator needs to know which store is in use.
		if !strings.Contains(sb.String(), "mongo.internal:27017") {
			t.Fatalf("log line hides where the avatar store is: %s", sb.String())
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(sb.String()), &line); err != nil {
			t.Fatalf("prod log is not JSON: %v", err)
		}
	})
}

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name         string
		containerMax int64
		want         int64
	}{
		{"no container limit", 0, defaultMemoryLimit},
		{"container limit leaves a fifth for the rest", 1 << 30, (1 << 30) / 5 * 4},
	}
	for _, tc := range tests {
		if got := memoryLimit(tc.containerMax); got != tc.want {
			t.Errorf("%s: memoryLimit(%d) = %d, want %d", tc.name, tc.containerMax, got, tc.want)
		}
	}
}

// TestCgroupMemoryMax_V1AndV2: the container's memory limit is read from cgroup v2's memory.max and,
// on nodes still on cgroup v1, from memory.limit_in_bytes; "max" and v1's near-2^63 mean none.
func TestCgroupMemoryMax_V1AndV2(t *testing.T) {
	write := func(files map[string]string) string {
		root := t.TempDir()
		for name, v := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2 limit", map[string]string{"memory.max": "536870912"}, 512 << 20},
		{"v2 none", map[string]string{"memory.max": "max"}, 0},
		{"v1 limit", map[string]string{"memory/memory.limit_in_bytes": "536870912"}, 512 << 20},
		{"v1 none", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712"}, 0},
		{"neither", nil, 0},
	} {
		if got := cgroupMemoryMaxIn(write(c.files)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
