package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/opaquetoken/watchertest"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// hasher is shared so parallel tests together respect its cap on concurrent argon2 work. Tests use
// the weak password.Fast cost because they create many users; the server always uses Default.
var (
	hasherOnce sync.Once
	hasher     *password.Hasher
)

func testHasher() *password.Hasher {
	// Tests register many users at once; a deep queue keeps the hasher's shedding (ErrBusy) out of them.
	hasherOnce.Do(func() { hasher = password.NewSized(password.Fast, 2, 1024) })
	return hasher
}

// env is one brands API on its own database, reached over a real socket by a client that validates
// every response against api/brands.yaml.
type env struct {
	t    testing.TB
	url  string
	c    *http.Client
	pool *pgxpool.Pool
	api  *httpapi.API
}

func newEnv(t testing.TB) *env { return newEnvWith(t, httpapi.Options{}) }

// newEnvWith is newEnv with options (a token lifetime, a clock); the hasher and logger are set here.
func newEnvWith(t testing.TB, opts httpapi.Options) *env {
	t.Helper()
	return newEnvPool(t, dbtest.New(t), opts)
}

// newEnvPool is newEnvWith on a given pool (one with an outage switch, or one of two instances),
// its handler wrapped in wrap (the server's own layers a test needs, outermost first).
func newEnvPool(t testing.TB, pool *pgxpool.Pool, opts httpapi.Options, wrap ...func(http.Handler) http.Handler) *env {
	t.Helper()
	if opts.Hasher == nil {
		opts.Hasher = testHasher()
	}
	if opts.Signups.Max == 0 {
		// Tests register many users from one address: the registration cap is tested on its own
		// (TestRegister_CappedPerAddress, with the server's default).
		opts.Signups.Max = 1 << 20
	}
	opts.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// As in the server: resolved tokens are cached, and revocations reach the cache by a Watcher.
	watcher := opts.Revocations == nil
	if watcher {
		opts.Revocations = opaquetoken.NewWatcher(pool, opts.Log)
	}
	api, err := httpapi.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if watcher {
		watchertest.Run(t, opts.Revocations)
	}
	h, err := router.Standalone(opts.Log, api.Mount)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(wrap) - 1; i >= 0; i-- {
		h = wrap[i](h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	// The published document, parsed once per test process (apitest.Spec).
	spec := apitest.Spec(t, "brands.yaml")
	c := apitest.Client(t, spec)
	// The race tests share the client among many goroutines.
	c.Transport = apitest.NewValidator(t, spec).Transport(t, &http.Transport{MaxIdleConnsPerHost: 128})
	return &env{t: t, url: srv.URL, c: c, pool: pool, api: api}
}

// twin starts a second server (its own caches and Watcher) on the same database, as a second
// instance would be.
func (e *env) twin() *env {
	e.t.Helper()
	w := opaquetoken.NewWatcher(e.pool, nil)
	api, err := httpapi.New(e.pool, httpapi.Options{Hasher: testHasher(), Revocations: w})
	if err != nil {
		e.t.Fatal(err)
	}
	watchertest.Run(e.t, w)
	h, err := router.Standalone(nil, api.Mount)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	e.t.Cleanup(srv.Close)
	return &env{t: e.t, url: srv.URL, c: e.c, pool: e.pool, api: api}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (r resp) errBody(t testing.TB) brandsapi.Error {
	t.Helper()
	var e brandsapi.Error
	r.decode(t, &e)
	return e
}

func (r resp) message(t testing.TB) string {
	t.Helper()
	var m brandsapi.Message
	r.decode(t, &m)
	return m.Message
}

// request describes one call: a query token, a bearer token, and a form or JSON body.
type request struct {
	method, path string
	token        string // sent as ?access_token=
	bearer       string // sent as Authorization: Bearer
	form         url.Values
	json         any    // a string is sent as is
	ctype        string // overrides the Content-Type the body kind implies
	idemKey      string // sent as Idempotency-Key
}

// secretFields are the request fields that carry passwords; no answer may repeat their values.
var secretFields = []string{"password", "currentPassword", "newPassword"}

// secrets returns the password values rq sends (long enough not to occur in a body by chance).
func (rq request) secrets() []string {
	var out []string
	add := func(v string) {
		if len(v) >= 8 {
			out = append(out, v)
		}
	}
	for _, f := range secretFields {
		for _, v := range rq.form[f] {
			add(v)
		}
		if m, ok := rq.json.(map[string]string); ok {
			add(m[f])
		}
	}
	return out
}

func (e *env) do(rq request) resp {
	e.t.Helper()
	u := e.url + rq.path
	if rq.token != "" {
		u += "?access_token=" + url.QueryEscape(rq.token)
	}
	var body io.Reader
	ctype := ""
	switch {
	case rq.form != nil:
		body, ctype = strings.NewReader(rq.form.Encode()), "application/x-www-form-urlencoded"
	case rq.json != nil:
		s, ok := rq.json.(string)
		if !ok {
			b, err := json.Marshal(rq.json)
			if err != nil {
				e.t.Fatal(err)
			}
			s = string(b)
		}
		body, ctype = strings.NewReader(s), "application/json"
	}
	req, err := http.NewRequestWithContext(context.Background(), rq.method, u, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if rq.ctype != "" {
		ctype = rq.ctype
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if rq.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+rq.bearer)
	}
	if rq.idemKey != "" {
		req.Header.Set("Idempotency-Key", rq.idemKey)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Errorf("%s %s: Content-Type %q, want JSON", rq.method, rq.path, ct)
	}
	// No answer ever carries a password or its hash.
	if strings.Contains(string(b), "$argon2") || strings.Contains(strings.ToLower(string(b)), "password_hash") {
		e.t.Errorf("%s %s leaks a password hash: %s", rq.method, rq.path, b)
	}
	// Nor a password it was sent, not even in a refusal's details.
	for _, pw := range rq.secrets() {
		if strings.Contains(string(b), pw) {
			e.t.Errorf("%s %s echoes a password: %s", rq.method, rq.path, b)
		}
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) want(r resp, status int) resp {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

// register creates a user through the API and returns it.
func (e *env) register(name, email, pw string) brandsapi.RegisteredUser {
	e.t.Helper()
	r := e.want(e.do(request{method: "POST", path: "/api/user/register",
		form: url.Values{"name": {name}, "email": {email}, "password": {pw}}}), http.StatusCreated)
	var u brandsapi.RegisteredUser
	r.decode(e.t, &u)
	return u
}

// admin creates an admin (as BRANDS_ADMIN_EMAIL does) and logs it in.
func (e *env) admin() string {
	e.t.Helper()
	if _, err := e.api.Service().EnsureAdmin(context.Background(), "root@example.com", "Root", "root-password"); err != nil {
		e.t.Fatal(err)
	}
	return e.login("root@example.com", "root-password")
}

func (e *env) login(email, pw string) string {
	e.t.Helper()
	r := e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {email}, "password": {pw}}}), http.StatusOK)
	var tok brandsapi.TokenResponse
	r.decode(e.t, &tok)
	return tok.Token
}

func (e *env) me(tok string) brandsapi.User {
	e.t.Helper()
	r := e.want(e.do(request{method: "GET", path: "/api/user/me", token: tok}), http.StatusOK)
	var u brandsapi.User
	r.decode(e.t, &u)
	return u
}

// createBrand creates a brand as the admin and returns it.
func (e *env) createBrand(adminTok string, in map[string]any) brandsapi.Brand {
	e.t.Helper()
	r := e.want(e.do(request{method: "POST", path: "/api/brand", token: adminTok, json: in}), http.StatusCreated)
	var b brandsapi.Brand
	r.decode(e.t, &b)
	return b
}

func (e *env) brand(id string) brandsapi.Brand {
	e.t.Helper()
	r := e.want(e.do(request{method: "GET", path: "/api/brand/" + id}), http.StatusOK)
	var b brandsapi.Brand
	r.decode(e.t, &b)
	return b
}

func (e *env) list(path string) []brandsapi.Brand {
	e.t.Helper()
	r := e.want(e.do(request{method: "GET", path: path}), http.StatusOK)
	var bs []brandsapi.Brand
	r.decode(e.t, &bs)
	return bs
}

var (
	hexID     = regexp.MustCompile(`^[0-9a-f]{24}$`)
	isoUTCms  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	b64Token  = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	unknownID = "0123456789abcdef01234567"
)
