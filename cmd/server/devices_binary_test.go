package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/throttle"
)

// deviceClient is a client leaving from 127.0.0.n that keeps whatever cookies the server gives it,
// as a browser or an app does.
func deviceClient(t *testing.T, n int) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := fromAddr(n)
	c.Jar = jar
	return c
}

// basicAuthSite is the auth surface's basic auth (AUTH_ADMIN_PASSWD, user admin, GET /auth/user) as
// a loginSite: nothing to register, a wrong password is 401.
func basicAuthSite(t *testing.T, base string) loginSite {
	return loginSite{name: "auth basic", wrong: http.StatusUnauthorized,
		register: func(*http.Client, string) answer { return answer{status: http.StatusCreated} },
		login: func(c *http.Client, _, pw string) answer {
			req, _ := http.NewRequest("GET", base+"/auth/user", nil)
			req.SetBasicAuth("admin", pw)
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return answer{}
			}
			resp.Body.Close()
			return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		}}
}

// Through a proxy the server does not trust, every client has the proxy's address: 10 wrong
// passwords for a named victim from there lock her name out of that address, but not her device:
// with the cookie her client kept she still gets in, on orders, brands and the auth surface's
// basic auth alike.
func TestBinary_UntrustedProxyLocksNoDeviceOut(t *testing.T) {
	t.Parallel()
	s := startLoginBinary(t)
	proxy := 140
	sites := loginSites(t, s.base)
	sites = append(sites, basicAuthSite(t, s.base))
	for i, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			victim, pw := "vicky", "vicky-password"
			if site.name == "auth basic" {
				victim, pw = "admin", prodAdminPasswd
			}
			if a := site.register(fromAddr(proxy+i), victim); a.status != http.StatusCreated {
				t.Fatalf("register: %+v", a)
			}
			device := deviceClient(t, proxy+i)
			if a := site.login(device, victim, pw); a.status != http.StatusOK {
				t.Fatalf("the victim's first login: %+v", a)
			}
			for k := range 10 {
				if a := site.login(fromAddr(proxy+i), victim, "guess"); a.status != site.wrong {
					t.Fatalf("guess %d: %+v, want %d", k+1, a, site.wrong)
				}
			}
			if a := site.login(fromAddr(proxy+i), victim, pw); a.status != http.StatusTooManyRequests {
				t.Fatalf("the right password behind the proxy without the device: %+v, want 429", a)
			}
			if a := site.login(device, victim, pw); a.status != http.StatusOK {
				t.Fatalf("the victim with her device behind the proxy: %+v, want 200", a)
			}
		})
	}
}

// forgedClient sends every request through a trusted proxy (the server trusts 127.0.0.1) naming
// 198.51.100.n as the client in X-Forwarded-For: one forged address of a botnet's.
type forgedClient struct {
	rt http.RoundTripper
	n  int
}

func (f forgedClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", f.n))
	return f.rt.RoundTrip(r)
}

// A botnet, or one client forging X-Forwarded-For through a trusted proxy: 10 wrong passwords from
// each of 40 addresses at one account get at most LOGIN_ACCOUNT_MAX (50) checked, the rest 429,
// on orders, brands and basic auth alike; the account's own device still gets in.
func TestBinary_ForgedAddressesMeetTheAccountCap(t *testing.T) {
	t.Parallel()
	s := startLoginBinary(t, "-trusted-proxies", "127.0.0.1")
	sites := loginSites(t, s.base)
	sites = append(sites, basicAuthSite(t, s.base))
	var wg sync.WaitGroup
	for _, site := range sites {
		wg.Go(func() {
			victim, pw := "bea", "bea-password"
			if site.name == "auth basic" {
				victim, pw = "admin", prodAdminPasswd
			}
			if a := site.register(fromAddr(150), victim); a.status != http.StatusCreated {
				t.Errorf("%s: register: %+v", site.name, a)
				return
			}
			device := deviceClient(t, 151)
			if a := site.login(device, victim, pw); a.status != http.StatusOK {
				t.Errorf("%s: the victim's first login: %+v", site.name, a)
				return
			}
			var checked, refused, other atomic.Int64
			var bots sync.WaitGroup
			// Four at a time, within the hasher's room for strangers (its 503s are not the point).
			for w := range 4 {
				bots.Go(func() {
					for n := w; n < 40; n += 4 {
						c := &http.Client{Timeout: 30 * time.Second, Transport: forgedClient{&http.Transport{DisableKeepAlives: true,
							DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}).DialContext}, n}}
						for range 10 {
							switch a := site.login(c, victim, "guess"); a.status {
							case site.wrong:
								checked.Add(1)
							case http.StatusTooManyRequests:
								refused.Add(1)
							default:
								other.Add(1)
							}
						}
					}
				})
			}
			bots.Wait()
			t.Logf("%s: 400 guesses from 40 forged addresses: %d checked, %d refused, %d other", site.name, checked.Load(), refused.Load(), other.Load())
			if checked.Load() > throttle.DefaultAccountMax || other.Load() != 0 {
				t.Errorf("%s: %d guesses checked (%d other answers), want at most the account cap %d", site.name, checked.Load(), other.Load(), throttle.DefaultAccountMax)
			}
			if a := site.login(device, victim, pw); a.status != http.StatusOK {
				t.Errorf("%s: the victim's device after the botnet: %+v, want 200", site.name, a)
			}
		})
	}
	wg.Wait()
}
