package main

import (
	"net/http"
	"net/url"
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
	base, _ := testServer(t, "-database-url", dbtest.NewURL(t))

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
	if n := sample(t, body, `triad_http_requests_total{method="GET",operation="/readyz",status_class="2xx",surface="platform"}`); n != 3 {
		t.Errorf("readyz requests counted %v, want 3", n)
	}
	if strings.Contains(body, `operation="/healthz"`) {
		t.Error("the liveness probe /healthz is metered")
	}
	if n := sample(t, body, `triad_http_requests_total{method="PATCH",operation="takeOrder",status_class="4xx",surface="orders"}`); n != 1 {
		t.Errorf("take requests counted %v, want 1", n)
	}
	if n := sample(t, body, `triad_http_requests_total{method="GET",operation="unmatched",status_class="4xx",surface="unmatched"}`); n != 1 {
		t.Errorf("unmatched requests counted %v, want 1", n)
	}
	if n := sample(t, body, `triad_http_request_duration_seconds_count{method="GET",operation="/readyz",surface="platform"}`); n != 3 {
		t.Errorf("readyz durations observed %v, want 3", n)
	}
	for _, series := range []string{
		`triad_http_requests_total{method="GET",operation="authLoginPage",status_class="2xx",surface="auth"}`,
		`triad_http_requests_total{method="GET",operation="getAuthUser",status_class="4xx",surface="auth"}`,
		`triad_http_requests_total{method="GET",operation="authLogin",status_class="4xx",surface="auth"}`,
		`triad_http_requests_total{method="POST",operation="authLoginPost",status_class="4xx",surface="auth"}`,
		`triad_http_requests_total{method="GET",operation="getAvatar",status_class="4xx",surface="auth"}`,
		`triad_http_requests_total{method="GET",operation="listBrands",status_class="2xx",surface="brands"}`,
		`triad_http_requests_total{method="POST",operation="loginUser",status_class="4xx",surface="brands"}`,
	} {
		if n := sample(t, body, series); n < 1 {
			t.Errorf("%s = %v, want at least 1", series, n)
		}
	}
	// Every request a surface answered is labelled with an operationId of its spec, never a route
	// pattern: the specs describe every route of the three surfaces.
	surfaceOps := regexp.MustCompile(`(?m)^triad_http_requests_total\{method="[A-Z]+",operation="([^"]*)",status_class="\dxx",surface="(auth|brands|orders)"\}`).FindAllStringSubmatch(body, -1)
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
	for _, g := range []string{"triad_db_pool_acquired_conns", "triad_db_pool_idle_conns", "triad_db_pool_total_conns",
		"triad_db_pool_max_conns", "triad_db_pool_acquires_total", "triad_db_pool_acquire_duration_seconds_total",
		"triad_db_pool_empty_acquires_total",
		`triad_password_hash_queue_depth{surface="orders"}`, `triad_password_hash_queue_depth{surface="brands"}`} {
		sample(t, body, g)
	}
	if n := sample(t, body, "triad_db_pool_max_conns"); n < 1 {
		t.Errorf("pool max conns %v", n)
	}
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
	base, _ := testServer(t, "-database-url", dbtest.NewURL(t), "-db-max-conns", "7")
	_, _, body := get(t, base+"/metrics")
	if n := sample(t, body, "triad_db_pool_max_conns"); n != 7 {
		t.Fatalf("pool max conns %v, want 7", n)
	}
}
