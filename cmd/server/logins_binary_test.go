package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// answer is one response as the login scenarios read it.
type answer struct {
	status     int
	code       string // the Error body's code, or the OAuth error
	retryAfter string
	body       string
}

// send makes one request from client and reads the answer; body is form-encoded when it is
// url.Values, JSON otherwise.
func send(t *testing.T, client *http.Client, method, u string, body any) answer {
	t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, ctype = strings.NewReader(string(js)), "application/json"
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Code, Error string }
	_ = json.Unmarshal(b, &e)
	return answer{resp.StatusCode, e.Code + e.Error, resp.Header.Get("Retry-After"), string(b)}
}

// loginSite is one surface's registration and password login on a running binary.
type loginSite struct {
	name     string
	register func(c *http.Client, user string) answer
	login    func(c *http.Client, user, pw string) answer
	wrong    int // the status of a wrong password
}

func loginSites(t *testing.T, base string) []loginSite {
	return []loginSite{
		{name: "orders", wrong: http.StatusBadRequest,
			register: func(c *http.Client, user string) answer {
				return send(t, c, "POST", base+"/users", map[string]string{"username": user, "password": user + "-password", "userType": "Customer"})
			},
			login: func(c *http.Client, user, pw string) answer {
				return send(t, c, "POST", base+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {user}, "password": {pw},
					"client_id": {prodClientID}, "client_secret": {prodClientSecret}})
			}},
		{name: "brands", wrong: http.StatusUnauthorized,
			register: func(c *http.Client, user string) answer {
				return send(t, c, "POST", base+"/api/user/register", url.Values{"name": {user}, "email": {user + "@example.com"}, "password": {user + "-password"}})
			},
			login: func(c *http.Client, user, pw string) answer {
				return send(t, c, "POST", base+"/api/user/login", url.Values{"email": {user + "@example.com"}, "password": {pw}})
			}},
	}
}

// Settings of a prod-mode binary under test (prod refuses the published dev values).
const (
	prodClientID     = "binary-test-orders"
	prodClientSecret = "binary-test-orders-client-secret-0123"
	prodAuthSecret   = "binary-test-auth-secret-0123456789abcdef"
	prodAdminPasswd  = "binary-test-admin-passwd-0123"
)

// prodArgs are the flags of a prod-mode binary with its production limits (dev mode's are
// generous), without the drain delay a balancer needs.
func prodArgs() []string {
	return []string{"-mode", "prod", "-orders-client-id", prodClientID, "-orders-client-secret", prodClientSecret,
		"-auth-secret", prodAuthSecret, "-auth-admin-passwd", prodAdminPasswd, "-drain-delay", "0"}
}

// startLoginBinary runs the built binary in prod mode, so with the production limits, on a fresh
// database and waits until it is ready.
func startLoginBinary(t *testing.T, args ...string) *binServer {
	t.Helper()
	s := startBinary(t, append(append(prodArgs(), "-database-url", dbtest.NewURL(t)), args...)...)
	waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })
	return s
}

// One address, many users, against the binary with the default limits: after 101 wrong passwords
// for made-up names from one address (more than the address's 100), zoe's right password from
// that same address still gets a token, on orders and brands alike; the guesser is slowed (its
// further checks are spaced LOGIN_ADDRESS_INTERVAL apart) and, when it sends many at once, shed
// with a short 429, never a 15-minute one. A peer sending X-Forwarded-For without being a trusted
// proxy is warned about once in the log and named in /readyz.
func TestBinary_GuessingFromOneAddressLocksNoOneOut(t *testing.T) {
	t.Parallel()
	s := startLoginBinary(t)
	var wg sync.WaitGroup
	for i, site := range loginSites(t, s.base) {
		wg.Go(func() {
			guesser := fromAddr(60 + i)
			if a := site.register(fromAddr(70+i), "zoe"); a.status != http.StatusCreated {
				t.Errorf("%s: register zoe: %+v", site.name, a)
				return
			}
			// Two at a time, the hasher's share of one client on two cores.
			var next sync.Mutex
			n := 0
			var guessers sync.WaitGroup
			for range 2 {
				guessers.Go(func() {
					for {
						next.Lock()
						n++
						k := n
						next.Unlock()
						if k > throttle.DefaultAddressMax+1 {
							return
						}
						if a := site.login(guesser, fmt.Sprintf("madeup%d", k), "guess"); a.status != site.wrong {
							t.Errorf("%s: guess %d: %+v", site.name, k, a)
						}
					}
				})
			}
			guessers.Wait()
			start := time.Now()
			if a := site.login(guesser, "zoe", "zoe-password"); a.status != http.StatusOK {
				t.Errorf("%s: zoe's right password from the guessing address: %+v, want 200", site.name, a)
			}
			// The address's next checks wait their slots: two more take at least one interval
			// after zoe's.
			site.login(guesser, "madeup-late1", "guess")
			site.login(guesser, "madeup-late2", "guess")
			if took := time.Since(start); took < throttle.DefaultAddressInterval {
				t.Errorf("%s: zoe and two guesses past the limit took %v, want at least %v", site.name, took, throttle.DefaultAddressInterval)
			}
			// Many at once: what the schedule cannot take within three slots is shed, briefly.
			answers := make(chan answer, 8)
			var burst sync.WaitGroup
			for k := range 8 {
				burst.Go(func() { answers <- site.login(fromAddr(60+i), fmt.Sprintf("burst%d", k), "guess") })
			}
			burst.Wait()
			close(answers)
			shed := 0
			for a := range answers {
				switch {
				case a.status == site.wrong:
				case a.status == http.StatusTooManyRequests && a.retryAfter != "" && len(a.retryAfter) <= 1:
					shed++
				default:
					t.Errorf("%s: a guess in a burst: %+v, want %d or 429 with a Retry-After of a few seconds", site.name, a, site.wrong)
				}
			}
			if shed == 0 {
				t.Errorf("%s: 8 guesses at once past the limit: none shed", site.name)
			}
		})
	}
	wg.Wait()

	// A client writing X-Forwarded-For itself (or a proxy nobody configured): warned about once.
	for range 3 {
		req, _ := http.NewRequest("GET", s.base+"/readyz", nil)
		req.Header.Set("X-Forwarded-For", "203.0.113.7")
		resp, err := fromAddr(80).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	code, _, body := get(t, s.base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, `"proxy":"X-Forwarded-For from 127.0.0.80, which is not a trusted proxy`) {
		t.Errorf("readyz after X-Forwarded-For from an untrusted peer: %d %s", code, body)
	}
	if n := strings.Count(s.log.String(), "X-Forwarded-For from a peer that is not a trusted proxy"); n != 1 {
		t.Errorf("%d warnings about the untrusted X-Forwarded-For, want 1:\n%s", n, s.log.String())
	}
}

// An office behind NAT, against the binary: 10 people logging in at once from one address all get
// their tokens (queued for the hasher within its budget), on orders and brands alike; one address
// sending far more than its share at once gets 429 with Retry-After for the excess, never 503
// server_busy, which is kept for a server whose whole hashing capacity is taken.
func TestBinary_OfficeBehindNATIsServed(t *testing.T) {
	t.Parallel()
	s := startLoginBinary(t)
	for i, site := range loginSites(t, s.base) {
		t.Run(site.name, func(t *testing.T) {
			office := fromAddr(90 + i)
			for k := range 10 {
				if a := site.register(fromAddr(92+i), fmt.Sprintf("staff%d", k)); a.status != http.StatusCreated {
					t.Fatalf("register staff%d: %+v", k, a)
				}
			}
			at := func(n int, c *http.Client) []answer {
				out := make([]answer, n)
				var wg sync.WaitGroup
				for k := range n {
					wg.Go(func() {
						user := fmt.Sprintf("staff%d", k%10)
						out[k] = site.login(c, user, user+"-password")
					})
				}
				wg.Wait()
				return out
			}
			for k, a := range at(10, office) {
				if a.status != http.StatusOK {
					t.Errorf("login %d of 10 at once from one address: %+v, want 200", k+1, a)
				}
			}
			limited := 0
			for _, a := range at(80, fromAddr(94+i)) {
				switch {
				case a.status == http.StatusOK:
				case a.status == http.StatusTooManyRequests && a.retryAfter == "1":
					limited++
				default:
					t.Errorf("one of 80 logins at once from one address: %+v, want 200 or 429 with Retry-After 1", a)
				}
			}
			if limited == 0 {
				t.Error("80 logins at once from one address: none refused with 429")
			}
		})
	}
}

// Sign-up farming, against the binary: with prod's default cap, 40 registrations from one address
// within a minute meet 429 too_many_signups from the 21st on, on orders and brands alike, while a
// real user from another address registers. Dev mode serves a developer's suite: 30 registrations
// from one address all succeed on each surface (its default is generous, and named at start),
// unless SIGNUP_MAX is set, which applies in every mode: with SIGNUP_MAX=20, 429 from the 21st.
func TestBinary_SignupsCappedPerAddress(t *testing.T) {
	t.Parallel()
	dev := []string{"-mode", "dev", "-auth-dev-port", "0"}
	for _, c := range []struct {
		name     string
		env      []string
		args     []string
		attempts int
		capped   int // the registrations that succeed; 0: all
	}{
		{"prod", nil, nil, 40, 20},
		{"dev", nil, dev, 30, 0},
		{"dev with SIGNUP_MAX=20", []string{"SIGNUP_MAX=20"}, dev, 30, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startBinaryEnv(t, c.env, append(append(prodArgs(), "-database-url", dbtest.NewURL(t)), c.args...)...)
			waitFor(t, func() bool { code, _, _ := get(t, s.base+"/readyz"); return code == http.StatusOK })
			// Dev mode names the defaults it gave at start, never a limit set explicitly.
			log := s.log.String()
			if dev, named := strings.Contains(log, "dev mode defaults"), strings.Contains(log, "SIGNUP_MAX=1000"); dev != (c.name != "prod") || named != (c.name == "dev") {
				t.Errorf("start-up log: dev mode's defaults named %v, SIGNUP_MAX=1000 among them %v; want %v, %v:\n%s", dev, named, c.name != "prod", c.name == "dev", log)
			}
			var wg sync.WaitGroup
			for i, site := range loginSites(t, s.base) {
				wg.Go(func() {
					farm := fromAddr(100 + i)
					for k := range c.attempts {
						a := site.register(farm, fmt.Sprintf("farm%d", k))
						switch {
						case (c.capped == 0 || k < c.capped) && a.status != http.StatusCreated:
							t.Errorf("%s: sign-up %d: %+v, want 201", site.name, k+1, a)
							return
						case c.capped > 0 && k >= c.capped && (a.status != http.StatusTooManyRequests || a.code != "too_many_signups" || a.retryAfter == ""):
							t.Errorf("%s: sign-up %d: %+v, want 429 too_many_signups with Retry-After", site.name, k+1, a)
							return
						}
					}
					if a := site.register(fromAddr(102+i), "real"); a.status != http.StatusCreated {
						t.Errorf("%s: a real user from another address: %+v", site.name, a)
					}
				})
			}
			wg.Wait()
		})
	}
}
