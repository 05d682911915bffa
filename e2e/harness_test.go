package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/patience"
	"github.com/triadhq/triad/impl/testkit/serverbin"
)

// Surface names, as in api/<name>.yaml.
const (
	orders = "orders"
	brands = "brands"
	auth   = "auth"
)

// The OAuth2 client of the orders API that every test server is configured with.
const (
	ordersClientID = "e2e-client"
	// Long enough for prod mode (24 characters), which deployment_test.go runs.
	ordersClientSecret = "e2e-client-secret-for-prod-mode"
)

var (
	repoRoot  string // absolute path of the repository
	serverBin string // the server binary built once by TestMain
	// remoteURL is a server already running elsewhere, e.g. a staging deployment (`make contract
	// BASE_URL=...`): startServer starts none and puts the Prism proxies in front of it instead.
	// Only the suites that need nothing but the API itself run that way (see the Makefile).
	remoteURL = strings.TrimSuffix(os.Getenv("TRIAD_E2E_BASE_URL"), "/")
	usePrism  = os.Getenv("TRIAD_E2E_PRISM") == "1" || remoteURL != ""
	// replicas > 1 runs every suite against that many servers on one database behind HAProxy
	// (make test-replicas); see replicas_test.go.
	replicas, _ = strconv.Atoi(os.Getenv("TRIAD_E2E_REPLICAS"))
)

func TestMain(m *testing.M) {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	repoRoot = root
	if remoteURL != "" {
		dbtest.Main(m, removeSDKPack) // no server to build: the suites talk to remoteURL
		return
	}
	// A race in the server under end-to-end traffic is a failure like any other: with -race, the
	// server is built with it too. serverbin builds it once per run (make test) or per process.
	bin, err := serverbin.Build(raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building the server:", err)
		os.Exit(1)
	}
	serverBin = bin
	dbtest.Main(m, removeSDKPack)
}

// removeSDKPack removes the folder of the SDK's package, if a test packed it (packSDK).
func removeSDKPack() {
	if sdkPackDir != "" {
		os.RemoveAll(sdkPackDir)
	}
}

// server is one running triad binary with its own database, and, in contract mode, one Prism
// validating proxy per surface in front of it.
type server struct {
	// URL is the server's own base URL, e.g. http://127.0.0.1:41234; behind a load balancer, the
	// balancer's.
	URL  string
	base map[string]string
	log  *syncBuffer
	cmd  *exec.Cmd
	// dbURL is the database the server uses; tests read it to check what was really written.
	dbURL string
}

// Base is the URL a client of surface talks to: the surface's Prism proxy in contract mode, the
// server itself otherwise.
func (s *server) Base(surface string) string {
	if b, ok := s.base[surface]; ok {
		return b
	}
	return s.URL
}

// startServer runs the binary in dev mode (so the prepared data exists) on a free port with a fresh
// database, waits until it is ready, and stops it when t ends. In contract mode it also starts a
// Prism proxy for each of surfaces.
func startServer(t *testing.T, surfaces ...string) *server {
	t.Helper()
	return startServerArgs(t, nil, surfaces...)
}

// startServerArgs is startServer with extra flags for the server (for every replica behind the
// balancer in replica mode).
func startServerArgs(t *testing.T, args []string, surfaces ...string) *server {
	t.Helper()
	if remoteURL != "" {
		if len(args) > 0 {
			t.Fatalf("this test starts the server with %q, which a running server at %s cannot take", args, remoteURL)
		}
		s := &server{URL: remoteURL, base: map[string]string{}, log: &syncBuffer{}}
		for _, surface := range surfaces {
			s.base[surface] = startPrism(t, surface, remoteURL)
		}
		return s
	}
	if replicas > 1 {
		return startCluster(t, replicas, args...).lb
	}
	dbURL := dbtest.NewURL(t)
	s := launchRetrying(t, launchOpts{dbURL: dbURL, args: args})
	waitReady(t, s.URL+"/readyz")
	if usePrism {
		for _, surface := range surfaces {
			s.base[surface] = startPrism(t, surface, s.URL)
		}
	}
	return s
}

// ordersClient is the OAuth2 client the orders suites log in with: the one every test server is
// started with, or, against a running server, TRIAD_E2E_ORDERS_CLIENT_ID and _SECRET (the dev-mode
// defaults when unset).
func ordersClient() (id, secret string) {
	if remoteURL == "" {
		return ordersClientID, ordersClientSecret
	}
	id, secret = os.Getenv("TRIAD_E2E_ORDERS_CLIENT_ID"), os.Getenv("TRIAD_E2E_ORDERS_CLIENT_SECRET")
	if id == "" {
		id, secret = "triad-orders", "triad-orders-secret"
	}
	return id, secret
}

// brandsAdmin is the brands admin account the admin suite logs in with: the dev-mode admin, or,
// against a running server, TRIAD_E2E_BRANDS_ADMIN_EMAIL and _PASSWORD when set.
func brandsAdmin() (email, password string) {
	email, password = os.Getenv("TRIAD_E2E_BRANDS_ADMIN_EMAIL"), os.Getenv("TRIAD_E2E_BRANDS_ADMIN_PASSWORD")
	if remoteURL == "" || email == "" {
		return "admin@brands.test", "admin-password"
	}
	return email, password
}

// authAccount is the direct-login account the auth suite logs in with: dev mode's demo user of the
// local provider, or, against a running server, TRIAD_E2E_AUTH_PROVIDER, _USER and _PASSWORD when
// set (a direct provider's account that exists there).
func authAccount() (provider, user, password string) {
	provider, user, password = os.Getenv("TRIAD_E2E_AUTH_PROVIDER"), os.Getenv("TRIAD_E2E_AUTH_USER"), os.Getenv("TRIAD_E2E_AUTH_PASSWORD")
	if remoteURL == "" || user == "" {
		return "local", "demo", "demo-password"
	}
	if provider == "" {
		provider = "local"
	}
	return provider, user, password
}

// uniqueName is name with a suffix unique to this run when the server is shared (a running server
// keeps the users of earlier runs), name itself otherwise.
func uniqueName(name string) string {
	if remoteURL == "" {
		return name
	}
	return name + "-" + runID
}

// runID tells this run's users from those of earlier runs against the same server.
var runID = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)

// launchOpts say how to start one server.
type launchOpts struct {
	dbURL string
	// publicURL is the base URL clients use (AUTH_URL); empty means the server's own.
	publicURL string
	// noAuthURL starts the server without -auth-url, so dev mode picks AUTH_URL itself.
	noAuthURL bool
	// devPort is the dev OAuth2 server's port; 0 picks a free one.
	devPort int
	// extra flags, e.g. SMTP settings.
	args []string
	// env adds NAME=value settings to the server's environment.
	env []string
}

// launchRetrying is launch, tried again when another process took the picked port meanwhile.
func launchRetrying(t *testing.T, o launchOpts) *server {
	t.Helper()
	for attempt := 0; ; attempt++ {
		s, log := launch(t, o)
		if s != nil {
			return s
		}
		if attempt == 2 || !strings.Contains(log, "address already in use") {
			t.Fatalf("server exited before listening:\n%s", log)
		}
	}
}

// launch starts the binary on a port picked just before. It returns nil and the server's log when
// the server exits before listening (another process may have taken the port meanwhile).
func launch(t *testing.T, o launchOpts) (*server, string) {
	t.Helper()
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	public := o.publicURL
	if public == "" {
		public = url
	}
	devPort := o.devPort
	if devPort == 0 {
		devPort = freePort(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, serverBin,
		"-mode", "dev",
		"-addr", fmt.Sprintf("127.0.0.1:%d", port),
		"-data-dir", t.TempDir(),
		"-log-level", "info",
		"-orders-client-id", ordersClientID,
		"-orders-client-secret", ordersClientSecret,
		"-auth-dev-port", fmt.Sprint(devPort),
	)
	if !o.noAuthURL {
		cmd.Args = append(cmd.Args, "-auth-url", public)
	}
	cmd.Args = append(cmd.Args, o.args...)
	cmd.Env = append(append(os.Environ(), "DATABASE_URL="+o.dbURL), o.env...)
	if o.noAuthURL {
		cmd.Env = append(cmd.Env, "AUTH_URL=") // empty is unset: not even the runner's environment gives one
	}
	// SIGTERM lets the server shut down gracefully and close its database connections before dbtest
	// drops the database.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	s := &server{URL: url, base: map[string]string{}, log: &syncBuffer{}, cmd: cmd, dbURL: o.dbURL}
	listening := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		seen := false
		for sc.Scan() {
			s.log.WriteLine(sc.Text())
			// Dev mode logs text, prod mode JSON.
			if !seen && (strings.Contains(sc.Text(), "msg=listening ") || strings.Contains(sc.Text(), `"msg":"listening"`)) {
				seen = true
				close(listening)
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-listening:
	case <-exited:
		cancel()
		return nil, s.log.String()
	case <-time.After(patience.Bound(2 * time.Minute)):
		cancel()
		<-exited
		t.Fatalf("server did not listen within %v:\n%s", patience.Bound(2*time.Minute), s.log.String())
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop within 30s")
		}
		out := s.log.String()
		if strings.Contains(out, "WARNING: DATA RACE") {
			t.Errorf("the server reported a data race:\n%s", out)
		} else if t.Failed() {
			t.Logf("server log:\n%s", out)
		}
	})
	return s, ""
}

// waitReady polls url until it answers 200.
func waitReady(t *testing.T, url string) {
	t.Helper()
	bound := patience.Bound(time.Minute)
	deadline := time.Now().Add(bound)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v (last error %v)", url, bound, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort asks the kernel for a free TCP port on the loopback. Another process could take it
// before it is used; the listeners that need a fixed number (the dev OAuth2 server, Prism) are
// started right after.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPrism puts a Prism validating proxy of gen/openapi/<surface>.yaml (the bundled spec) in
// front of upstream, as `prism proxy --errors` does, and returns its base URL. The proxies of a test
// process all run in one Node process (prismHub). When t ends, any violation Prism logged fails the
// test, whether or not a client saw it.
func startPrism(t *testing.T, surface, upstream string) string {
	t.Helper()
	ensureNodeModules(t)
	h := theHub(t)
	p := h.start(filepath.Join(repoRoot, "gen", "openapi", surface+".yaml"), upstream)
	bound := patience.Bound(time.Minute)
	select {
	case answer := <-p.answer:
		url, ok := strings.CutPrefix(answer, "listening ")
		if !ok {
			t.Fatalf("Prism (%s) did not start: %s", surface, answer)
		}
		t.Cleanup(func() {
			h.stop(p)
			if v := prismViolations(p.log.String()); v != "" {
				t.Errorf("Prism (%s) reported contract violations:\n%s", surface, v)
			}
			if t.Failed() {
				t.Logf("Prism (%s) log:\n%s", surface, p.log.String())
			}
		})
		return url
	case <-h.exited:
		t.Fatalf("the Prism hub exited:\n%s", h.out.String())
	case <-time.After(bound):
		t.Fatalf("Prism (%s) did not start within %v:\n%s", surface, bound, h.out.String())
	}
	return ""
}

// prismHub is the Node process (testdata/prismhub.cjs) that runs every Prism proxy of the test
// process: one start of Node and of Prism instead of one per proxy (about 3.8 s of CPU each), and
// each spec read once. It is started by the first proxy and ends with the test process (its stdin
// closes).
type prismHub struct {
	mu      sync.Mutex
	stdin   io.Writer
	next    int
	proxies map[string]*prismProxy
	exited  chan struct{}
	out     *syncBuffer // the hub's own lines (not a proxy's), for a failure's message
}

// prismProxy is one proxy of the hub: its first answer (listening <URL> or failed <reason>), the
// stop's acknowledgement, and its log.
type prismProxy struct {
	id      string
	answer  chan string
	stopped chan struct{}
	log     *syncBuffer
}

var (
	hubOnce sync.Once
	hub     *prismHub
	hubErr  error
)

// theHub starts the hub once per test process.
func theHub(t *testing.T) *prismHub {
	t.Helper()
	hubOnce.Do(func() { hub, hubErr = startHub() })
	if hubErr != nil {
		t.Fatalf("starting the Prism hub: %v", hubErr)
	}
	return hub
}

func startHub() (*prismHub, error) {
	cmd := exec.Command("node", filepath.Join(repoRoot, "e2e", "testdata", "prismhub.cjs"))
	cmd.Dir = repoRoot
	h := &prismHub{proxies: map[string]*prismProxy{}, exited: make(chan struct{}), out: &syncBuffer{}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			h.out.WriteLine(sc.Text())
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			id, rest, _ := strings.Cut(sc.Text(), " ")
			h.mu.Lock()
			p := h.proxies[id]
			h.mu.Unlock()
			switch kind, line, _ := strings.Cut(rest, " "); {
			case p == nil:
				h.out.WriteLine(sc.Text())
			case kind == "log":
				p.log.WriteLine(line)
			case kind == "stopped":
				close(p.stopped)
			default: // listening or failed
				p.answer <- rest
			}
		}
		_ = cmd.Wait()
		close(h.exited)
	}()
	return h, nil
}

// start asks the hub for a proxy of spec in front of upstream.
func (h *prismHub) start(spec, upstream string) *prismProxy {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	p := &prismProxy{id: strconv.Itoa(h.next), answer: make(chan string, 1), stopped: make(chan struct{}), log: &syncBuffer{}}
	h.proxies[p.id] = p
	fmt.Fprintf(h.stdin, "start %s %s %s\n", p.id, spec, upstream)
	return p
}

// stop closes p and waits until the hub says so: every line p logged before is then read.
func (h *prismHub) stop(p *prismProxy) {
	h.mu.Lock()
	fmt.Fprintf(h.stdin, "stop %s\n", p.id)
	h.mu.Unlock()
	select {
	case <-p.stopped:
	case <-h.exited:
	case <-time.After(patience.Bound(time.Minute)):
	}
	h.mu.Lock()
	delete(h.proxies, p.id)
	h.mu.Unlock()
}

// prismViolations returns the lines of a Prism log that report a contract violation: a response or
// request that does not match the spec, or a request Prism refused (it refuses only invalid ones).
func prismViolations(log string) string {
	var b strings.Builder
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "Violation:") || strings.Contains(line, "Request terminated with error") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// contractTransport fails the test on any response that Prism flagged: one carrying sl-violations
// (Prism's list of violations, sent even for warnings such as an undocumented status) or one of
// Prism's own problem documents, which it sends instead of a response it could not validate.
type contractTransport struct {
	t    testing.TB
	base http.RoundTripper
}

func (c contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if v := resp.Header.Get("sl-violations"); v != "" {
		c.t.Errorf("Prism: %s %s -> %d violates the spec: %s", req.Method, req.URL.Path, resp.StatusCode, v)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var problem struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(body, &problem) == nil && strings.HasPrefix(problem.Type, "https://stoplight.io/prism/errors#") {
			c.t.Errorf("Prism refused %s %s: %s", req.Method, req.URL.Path, body)
		}
	}
	return resp, nil
}

// httpClient returns the client every test request goes through: each response is validated in
// process against spec by kin-openapi (impl/testkit/apitest), and, in contract mode, checked for Prism's
// verdict. Redirects are not followed so tests can assert on them.
func httpClient(t testing.TB, spec *openapi3.T) *http.Client {
	return httpClientVia(t, spec, nil, nil)
}

// httpClientVia is httpClient where, in contract mode, the requests for which bypass is true go to
// the server itself instead of the Prism proxy their URL names. Prism's proxy cannot carry two
// kinds of exchange faithfully: it follows redirects itself instead of returning them
// (stoplightio/prism#1977), and it joins several Set-Cookie headers into one, which breaks
// cookies. Those exchanges are still validated in process against the spec.
func httpClientVia(t testing.TB, spec *openapi3.T, srv *server, bypass func(*http.Request) bool) *http.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if usePrism {
		rt = contractTransport{t: t, base: rt}
		if bypass != nil {
			rt = bypassTransport{srv: srv, bypass: bypass, base: rt}
		}
	}
	return &http.Client{
		Transport:     apitest.NewValidator(t, spec).Transport(t, rt),
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// bypassTransport sends the requests bypass selects to the server, the others to base.
type bypassTransport struct {
	srv    *server
	bypass func(*http.Request) bool
	base   http.RoundTripper
}

func (b bypassTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !b.bypass(req) {
		return b.base.RoundTrip(req)
	}
	direct := req.Clone(req.Context())
	u, err := url.Parse(b.srv.URL)
	if err != nil {
		return nil, err
	}
	direct.URL.Scheme, direct.URL.Host, direct.Host = u.Scheme, u.Host, ""
	return http.DefaultTransport.RoundTrip(direct)
}

// loadSpec parses the published spec of surface (its bundle, gen/openapi/<surface>.yaml, as embedded
// in the binary). The
// tests validate against it rather than the generated packages' GetSpec, which leaves out operations
// excluded from code generation (the orders token endpoint is served by hand).
func loadSpec(t testing.TB, surface string) *openapi3.T {
	t.Helper()
	data, err := api.FS.ReadFile(surface + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("parsing gen/openapi/%s.yaml: %v", surface, err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		t.Fatalf("gen/openapi/%s.yaml is not valid OpenAPI: %v", surface, err)
	}
	return spec
}

// syncBuffer collects a child process's log lines for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) WriteLine(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(line)
	s.b.WriteByte('\n')
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	npmOnce sync.Once
	npmErr  string
)

// ensureNodeModules installs the pinned npm packages (tsc for the SDK, Prism for the
// contract run) when `make deps-npm` has not, so `go test ./...` works on a fresh checkout too.
func ensureNodeModules(t *testing.T) {
	t.Helper()
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(repoRoot, "node_modules", "typescript", "package.json")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = err.Error() + "\n" + string(out)
		}
	})
	if npmErr != "" {
		t.Fatalf("npm ci (the pinned npm packages): %s", npmErr)
	}
}
