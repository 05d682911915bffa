package main

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_Metrics sends real traffic through the whole server and scrapes /metrics: the request
// counters move under the route pattern, ids in paths never become labels, and the pool is watched.
func TestServer_Metrics(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t))

	for range 3 {
		if code, _, _ := get(t, base+"/readyz"); code != http.StatusOK {
			t.Fatalf("/readyz: %d", code)
		}
		// The liveness probe is answered ahead of the metrics: it must not appear below.
		if code, _, _ := get(t, base+"/healthz"); code != http.StatusOK {
			t.Fatalf("/healthz: %d", code)
		}
	}
	// A route with an id in its path (refused without a token) and a path no route matches.
	req, _ := http.NewRequest(http.MethodPatch, base+"/orders/987654321/take", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, base+"/no-such-thing/123456789")
	// Eleven wrong passwords for one brands account: the 11th is refused by the login throttle.
	for range 11 {
		resp, err := http.PostForm(base+"/api/user/login", url.Values{"email": {"nobody@brands.test"}, "password": {"wrong-password"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	// The auth and brands surfaces: the login page (with and without its trailing slash), a session
	// read, a provider route with a parameter, a login, an avatar and a brands list.
	for _, p := range []string{"/auth", "/auth/", "/auth/user", "/auth/no-such-provider/login", "/avatar/0123456789abcdef", "/api/brand/list"} {
		get(t, base+p)
	}
	if resp, err := http.Post(base+"/auth/local/login", "application/json", strings.NewReader(`{"user":"demo","passwd":"wrong-password"}`)); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}

	code, hdr, body := get(t, base+"/metrics")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", code, hdr.Get("Content-Type"))
	}
	if n := sample(t, body, `triad_http_requests_total{code="",method="GET",operation="/readyz",status="200",surface="platform"}`); n != 3 {
		t.Errorf("readyz requests counted %v, want 3", n)
	}
	if strings.Contains(body, `operation="/healthz"`) {
		t.Error("the liveness probe /healthz is metered")
	}
	if n := sample(t, body, `triad_http_requests_total{code="unauthorized",method="PATCH",operation="takeOrder",status="401",surface="orders"}`); n != 1 {
		t.Errorf("take requests counted %v, want 1", n)
	}
	if n := sample(t, body, `triad_http_requests_total{code="not_found",method="GET",operation="unmatched",status="404",surface="unmatched"}`); n != 1 {
		t.Errorf("unmatched requests counted %v, want 1", n)
	}
	if n := sample(t, body, `triad_http_request_duration_seconds_count{method="GET",operation="/readyz",status_class="2xx",surface="platform"}`); n != 3 {
		t.Errorf("readyz durations observed %v, want 3", n)
	}
	for _, series := range []string{
		`{method="GET",operation="authLoginPage",status="200",surface="auth"}`,
		`{method="GET",operation="getAuthUser",status="401",surface="auth"}`,
		`{method="GET",operation="authLogin",status="400",surface="auth"}`,
		`{method="POST",operation="authLoginPost",status="403",surface="auth"}`,
		`{method="GET",operation="getAvatar",status="404",surface="auth"}`,
		`{method="GET",operation="listBrands",status="200",surface="brands"}`,
		`{method="POST",operation="loginUser",status="401",surface="brands"}`,
	} {
		if n := sumOf(body, "triad_http_requests_total", series); n < 1 {
			t.Errorf("triad_http_requests_total%s = %v, want at least 1", series, n)
		}
	}
	// Every request a surface answered is labelled with an operationId of its spec, never a route
	// pattern: the specs describe every route of the three surfaces.
	surfaceOps := regexp.MustCompile(`(?m)^triad_http_requests_total\{code="[a-z_]*",method="[A-Z]+",operation="([^"]*)",status="\d+",surface="(auth|brands|orders)"\}`).FindAllStringSubmatch(body, -1)
	if len(surfaceOps) < 8 {
		t.Errorf("%d request series of the surfaces, want one per operation called above", len(surfaceOps))
	}
	for _, m := range surfaceOps {
		if strings.Contains(m[1], "/") {
			t.Errorf("surface %s labels an operation by its route pattern %q, not its operationId", m[2], m[1])
		}
	}
	// The 11th login was refused by the throttle, and counted.
	if n := sample(t, body, `triad_login_throttle_refusals_total{surface="brands"}`); n != 1 {
		t.Errorf("login throttle refusals counted %v, want 1", n)
	}
	for _, raw := range []string{"987654321", "123456789"} {
		if strings.Contains(body, raw) {
			t.Errorf("a raw path with id %s appears in the metrics", raw)
		}
	}
	for _, g := range []string{`triad_db_pool_acquired_conns{pool="primary"}`, `triad_db_pool_idle_conns{pool="primary"}`, `triad_db_pool_total_conns{pool="primary"}`,
		`triad_db_pool_max_conns{pool="primary"}`, `triad_db_pool_acquires_total{pool="primary"}`, `triad_db_pool_acquire_duration_seconds_total{pool="primary"}`,
		`triad_db_pool_empty_acquires_total{pool="primary"}`, `triad_db_pool_empty_acquire_wait_seconds_total{pool="primary"}`, `triad_db_pool_canceled_acquires_total{pool="primary"}`,
		`triad_password_hash_queue_depth{surface="orders"}`, `triad_password_hash_queue_depth{surface="brands"}`} {
		sample(t, body, g)
	}
	if n := sample(t, body, `triad_db_pool_max_conns{pool="primary"}`); n < 1 {
		t.Errorf("pool max conns %v", n)
	}
	// The build, the three runtime knobs the server sets itself, the business counters present at
	// 0 before any event, and the background work.
	if !regexp.MustCompile(`(?m)^triad_build_info\{goversion="go1\.[^"]+",revision="[^"]+",version="[^"]+"\} 1$`).MatchString(body) {
		t.Errorf("no triad_build_info{goversion,revision,version} 1 in:\n%s", grepTriad(body))
	}
	for _, g := range []string{"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads"} {
		if n := sample(t, body, g); n <= 0 {
			t.Errorf("%s = %v", g, n)
		}
	}
	for _, ev := range []string{"created", "accepted", "auto_accepted", "expired"} {
		sample(t, body, `triad_orders_events_total{event="`+ev+`"}`)
	}
	for _, r := range []string{"sent", "failed"} {
		sample(t, body, `triad_auth_mails_total{result="`+r+`"}`)
	}
	// The shared tables' sweeps run at start: their last success is a recent Unix time.
	// So do the auth surface's, on the same instruments (the sweep leader's sweep.Observer): the
	// revoked sessions' rows and the used ids and messenger logins.
	for _, sw := range []string{"login throttles", "idempotency keys", "revoked sessions", "auth used ids and messenger logins"} {
		if ts := sample(t, body, `triad_sweep_last_success_timestamp_seconds{sweep="`+sw+`"}`); ts < 1.7e9 {
			t.Errorf("%s: last sweep at %v", sw, ts)
		}
		if n := sample(t, body, `triad_sweep_runs_total{result="ok",sweep="`+sw+`"}`); n < 1 {
			t.Errorf("%s: %v successful runs counted", sw, n)
		}
		sample(t, body, `triad_sweep_rows_total{sweep="`+sw+`"}`)
	}
	// The 11th brands login's refusal by the throttle is told apart by its code.
	if n := sumOf(body, "triad_http_requests_total", `{code="too_many_attempts",operation="loginUser",status="429"}`); n != 1 {
		t.Errorf("throttled brands logins counted %v under code too_many_attempts, want 1", n)
	}
	// Every metric the server exports is documented in docs/operations.md's table, which the shipped
	// dashboards and rules are checked against (deploy/monitoring_test.go), and every documented one
	// is exported; the standby's lag only with a standby (DATABASE_READ_URL), which this server lacks.
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(triad_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	exported := map[string]bool{"triad_db_standby_replay_lag_bytes": true}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (triad_\w+) `).FindAllStringSubmatch(body, -1) {
		exported[m[1]] = true
		if !documented[m[1]] {
			t.Errorf("%s is exported but not in docs/operations.md's metrics table", m[1])
		}
	}
	for name := range documented {
		if !exported[name] {
			t.Errorf("docs/operations.md documents %s, which the server does not export", name)
		}
	}
	// The revocation listener comes up within moments of the start.
	waitFor(t, func() bool {
		_, _, body := get(t, base+"/metrics")
		return sample(t, body, "triad_token_revocation_listener_up") == 1
	})
}

// sumOf adds up the samples of metric whose labels include every label of want (`{k="v",...}`).
func sumOf(body, metric, want string) float64 {
	pairs := regexp.MustCompile(`(\w+)="([^"]*)"`).FindAllString(want, -1)
	sum := 0.0
	for _, m := range regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(metric)+`(\{[^}]*\}) (\S+)$`).FindAllStringSubmatch(body, -1) {
		all := true
		for _, p := range pairs {
			all = all && strings.Contains(m[1], p)
		}
		if v, err := strconv.ParseFloat(m[2], 64); all && err == nil {
			sum += v
		}
	}
	return sum
}

// sample returns the value of the exposition line whose name and labels are exactly series.
func sample(t *testing.T, body, series string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no sample %s in:\n%s", series, grepTriad(body))
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func grepTriad(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "triad_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServer_DBMaxConns: DB_MAX_CONNS sizes the database pool (seen in the pool gauge).
func TestServer_DBMaxConns(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t), "-db-max-conns", "7")
	_, _, body := get(t, base+"/metrics")
	if n := sample(t, body, `triad_db_pool_max_conns{pool="primary"}`); n != 7 {
		t.Fatalf("pool max conns %v, want 7", n)
	}
}
