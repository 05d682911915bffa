// Package authpeer measures triad's auth library beside go-pkgz/auth v2 in one process: the same
// secret, issuer, audience and durations, real tokens from each library's own direct login, and
// the four requests a site serves most (a protected route with the cookie and XSRF header, the
// same with the X-JWT header, GET /auth/user, and a protected route whose cookie token has expired
// and is refreshed). It lives in a module of its own so that the server's go.mod never carries the
// peer; scripts/bench.sh runs it (docs/auth.md, "Speed").
package authpeer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	pkgz "github.com/go-pkgz/auth/v2"
	pkgzprovider "github.com/go-pkgz/auth/v2/provider"
	pkgztoken "github.com/go-pkgz/auth/v2/token"
	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// The settings both libraries get.
const (
	secret   = "bench-secret-0123456789abcdef-0123456789"
	issuer   = "bench"
	audience = "site"
	tokenDur = 5 * time.Minute
	cookieDu = 24 * time.Hour
)

// side is one library wired as a site wires it: a chi router with the auth handler mounted at
// /auth and a route /private behind the Auth middleware.
type side struct {
	name string
	h    http.Handler
	// login runs the library's direct login and returns its cookies.
	login func() []*http.Cookie
	// expire re-signs the token of a cookie with exp a minute in the past, as the library would
	// have issued it five minutes earlier.
	expire func(tok string) string
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func triadSide(tb testing.TB) side {
	svc, err := auth.New(auth.Options{
		SecretReader:   token.SecretFunc(func(string) (string, error) { return secret, nil }),
		URL:            "http://localhost",
		Issuer:         issuer,
		Audiences:      []string{audience},
		TokenDuration:  tokenDur,
		CookieDuration: cookieDu,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.AddDirectProvider("local", provider.CredCheckerFunc(func(string, string) (bool, error) { return true, nil })); err != nil {
		tb.Fatal(err)
	}
	authH, _ := svc.Handlers()
	r := chi.NewRouter()
	r.Mount("/auth", authH)
	r.With(svc.Middleware().Auth).Get("/private", ok)
	return side{name: "triad", h: r,
		login: func() []*http.Cookie { return login(tb, r) },
		expire: func(tok string) string {
			c, err := svc.TokenService().Parse(tok)
			if err != nil {
				tb.Fatal(err)
			}
			now := time.Now()
			c.IssuedAt = jwt.NewNumericDate(now.Add(-tokenDur - time.Minute))
			c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute))
			out, err := svc.TokenService().Token(c)
			if err != nil {
				tb.Fatal(err)
			}
			return out
		}}
}

func peerSide(tb testing.TB) side {
	svc := pkgz.NewService(pkgz.Opts{
		SecretReader:   pkgztoken.SecretFunc(func(string) (string, error) { return secret, nil }),
		URL:            "http://localhost",
		Issuer:         issuer,
		AudienceReader: pkgztoken.AudienceFunc(func() ([]string, error) { return []string{audience}, nil }),
		TokenDuration:  tokenDur,
		CookieDuration: cookieDu,
	})
	svc.AddDirectProvider("local", pkgzprovider.CredCheckerFunc(func(string, string) (bool, error) { return true, nil }))
	authH, _ := svc.Handlers()
	m := svc.Middleware()
	r := chi.NewRouter()
	r.Mount("/auth", authH)
	r.With(m.Auth).Get("/private", ok)
	return side{name: "go-pkgz", h: r,
		login: func() []*http.Cookie { return login(tb, r) },
		expire: func(tok string) string {
			c, err := svc.TokenService().Parse(tok)
			if err != nil {
				tb.Fatal(err)
			}
			now := time.Now()
			c.IssuedAt = jwt.NewNumericDate(now.Add(-tokenDur - time.Minute))
			c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute))
			out, err := svc.TokenService().Token(c)
			if err != nil {
				tb.Fatal(err)
			}
			return out
		}}
}

// login is a direct login through the side's own handler, as a browser makes it.
func login(tb testing.TB, h http.Handler) []*http.Cookie {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/auth/local/login?user=demo&passwd=demo-password&aud="+audience, nil))
	if w.Code != http.StatusOK {
		tb.Fatalf("login: %d %s", w.Code, w.Body)
	}
	return w.Result().Cookies()
}

func cookie(cs []*http.Cookie, name string) string {
	for _, c := range cs {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// A benchCase builds the request of one case for a side and names the status it must answer.
type benchCase struct {
	name   string
	status int
	req    func(tb testing.TB, s side) *http.Request
}

var cases = []benchCase{
	{"cookie+xsrf", http.StatusNoContent, func(tb testing.TB, s side) *http.Request {
		cs := s.login()
		r := httptest.NewRequest(http.MethodGet, "/private", nil)
		for _, c := range cs {
			r.AddCookie(c)
		}
		r.Header.Set("X-XSRF-TOKEN", cookie(cs, "XSRF-TOKEN"))
		return r
	}},
	{"x-jwt", http.StatusNoContent, func(tb testing.TB, s side) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/private", nil)
		r.Header.Set("X-JWT", cookie(s.login(), "JWT"))
		return r
	}},
	{"auth-user", http.StatusOK, func(tb testing.TB, s side) *http.Request {
		cs := s.login()
		r := httptest.NewRequest(http.MethodGet, "/auth/user", nil)
		for _, c := range cs {
			r.AddCookie(c)
		}
		r.Header.Set("X-XSRF-TOKEN", cookie(cs, "XSRF-TOKEN"))
		return r
	}},
	{"refresh", http.StatusNoContent, func(tb testing.TB, s side) *http.Request {
		cs := s.login()
		r := httptest.NewRequest(http.MethodGet, "/private", nil)
		r.AddCookie(&http.Cookie{Name: "JWT", Value: s.expire(cookie(cs, "JWT"))})
		r.AddCookie(&http.Cookie{Name: "XSRF-TOKEN", Value: cookie(cs, "XSRF-TOKEN")})
		r.Header.Set("X-XSRF-TOKEN", cookie(cs, "XSRF-TOKEN"))
		return r
	}},
}

// discard is a ResponseWriter that keeps the status and headers only, so the measurement is the
// library's work and not a recorder's buffer.
type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) Write(b []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return len(b), nil
}

func (d *discard) WriteHeader(s int) {
	if d.status == 0 {
		d.status = s
	}
}

// serve returns a function serving the request once and checking its status (and, for the
// refresh, that a new cookie was set).
func serve(tb testing.TB, s side, c benchCase) func() {
	r := c.req(tb, s)
	d := &discard{h: http.Header{}}
	check := func() {
		if d.status != c.status {
			tb.Fatalf("%s %s: status %d, want %d", s.name, c.name, d.status, c.status)
		}
		if c.name == "refresh" && !strings.Contains(strings.Join(d.h.Values("Set-Cookie"), ";"), "JWT=") {
			tb.Fatalf("%s refresh: no cookie set", s.name)
		}
	}
	s.h.ServeHTTP(d, r)
	check()
	return func() {
		clear(d.h)
		d.status = 0
		s.h.ServeHTTP(d, r)
		if d.status != c.status {
			check()
		}
	}
}

// BenchmarkSide measures each case on each side alone: ns/op and allocs/op.
func BenchmarkSide(b *testing.B) {
	for _, c := range cases {
		for _, mk := range []func(testing.TB) side{triadSide, peerSide} {
			s := mk(b)
			b.Run(c.name+"/"+s.name, func(b *testing.B) {
				f := serve(b, s, c)
				b.ReportAllocs()
				for b.Loop() {
					f()
				}
			})
		}
	}
}

// BenchmarkVsPeer runs each case on both sides in interleaved blocks (one op is one request on each side), so a neighbour's burst on a
// shared machine lands on both alike, and reports ns/triad, ns/peer, their ratio x-peer (triad's
// time over the peer's: under 1 is faster) and each side's allocations per request. Each -count
// is one round; scripts/bench.sh takes the median and range of the rounds.
func BenchmarkVsPeer(b *testing.B) {
	t, p := triadSide(b), peerSide(b)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ft, fp := serve(b, t, c), serve(b, p, c)
			const block = 64
			var tT, pT time.Duration
			for i := 0; i < b.N; i += block {
				n := min(block, b.N-i)
				// Alternate which side goes first, so neither always follows the other's garbage.
				first, second, ff, sf := &tT, &pT, ft, fp
				if (i/block)%2 == 1 {
					first, second, ff, sf = &pT, &tT, fp, ft
				}
				t0 := time.Now()
				for range n {
					ff()
				}
				t1 := time.Now()
				for range n {
					sf()
				}
				*first += t1.Sub(t0)
				*second += time.Since(t1)
			}
			b.StopTimer()
			reqs := float64(b.N)
			b.ReportMetric(float64(tT.Nanoseconds())/reqs, "ns/triad")
			b.ReportMetric(float64(pT.Nanoseconds())/reqs, "ns/peer")
			b.ReportMetric(float64(tT)/float64(max(pT, 1)), "x-peer")
			b.ReportMetric(testing.AllocsPerRun(100, ft), "allocs/triad")
			b.ReportMetric(testing.AllocsPerRun(100, fp), "allocs/peer")
		})
	}
}

// TestSidesAgree checks that each case is what it claims on both sides before anything is timed:
// the same status, a refresh that sets a new cookie, a user in /auth/user.
func TestSidesAgree(t *testing.T) {
	t.Parallel()
	for _, mk := range []func(testing.TB) side{triadSide, peerSide} {
		s := mk(t)
		for _, c := range cases {
			serve(t, s, c)()
		}
		r := cases[2].req(t, s)
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		if !strings.Contains(string(body), `"name":"demo"`) {
			t.Fatalf("%s /auth/user: %s", s.name, body)
		}
	}
}
