package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestMount_PasswordsGuarded: every password is throttled: the auth surface's direct login (GET
// and POST) and basic auth with AdminPasswd go through the same login guard as orders and brands (its PostgreSQL count,
// the one 429 code): 15 wrong passwords for demo meet 429 too_many_attempts from the 11th, right
// password included; basic auth likewise; another address is not affected; and the code is the
// one brands answers.
func TestMount_PasswordsGuarded(t *testing.T) {
	t.Parallel()
	base := serve(t, dbtest.NewURL(t), true, Settings{AdminPasswd: "admin-secret-password-0123"})
	guesser := fromAddr(120)
	for i := range 15 {
		var a answer
		if i%2 == 0 {
			a = send(t, guesser, "GET", base+"/auth/local/login?"+url.Values{"user": {"demo"}, "passwd": {"guess"}}.Encode(), nil)
		} else {
			a = send(t, guesser, "POST", base+"/auth/local/login", map[string]string{"user": "demo", "passwd": "guess"})
		}
		secs, _ := strconv.Atoi(a.retryAfter)
		switch {
		case i < 10 && a.status != http.StatusForbidden:
			t.Fatalf("wrong password %d: %+v, want 403", i+1, a)
		case i >= 10 && (a.status != http.StatusTooManyRequests || a.code != refusal.CodeTooManyAttempts || secs < 890 || secs > 900):
			t.Fatalf("wrong password %d: %+v, want 429 too_many_attempts with Retry-After about 900", i+1, a)
		}
	}
	if a := send(t, guesser, "GET", base+"/auth/local/login?user=demo&passwd=demo-password", nil); a.status != http.StatusTooManyRequests {
		t.Fatalf("the right password past the limit: %+v, want 429 (not checked)", a)
	}
	if a := send(t, fromAddr(121), "GET", base+"/auth/local/login?user=demo&passwd=demo-password", nil); a.status != http.StatusOK {
		t.Fatalf("demo from another address: %+v", a)
	}

	basic := func(pw string) answer {
		req, _ := http.NewRequest("GET", base+"/auth/user", nil)
		req.SetBasicAuth("admin", pw)
		resp, err := fromAddr(122).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	}
	if a := basic("admin-secret-password-0123"); a.status != http.StatusOK {
		t.Fatalf("basic auth, right password: %+v", a)
	}
	for i := range 10 {
		if a := basic("guess"); a.status != http.StatusUnauthorized {
			t.Fatalf("basic auth, wrong password %d: %+v", i+1, a)
		}
	}
	if a := basic("admin-secret-password-0123"); a.status != http.StatusTooManyRequests || a.retryAfter == "" {
		t.Fatalf("basic auth past 10 wrong passwords: %+v, want 429 with Retry-After", a)
	}
}

// TestMount_AdminGetsInFromAKnownNetwork: the basic-auth admin's client keeps no device cookie,
// so the per-account cap used to lock the admin out everywhere. After the admin signed in once
// from one address, 60 wrong passwords from 6 others spend the account's strangers' share; the
// admin's right password from the address it used is still checked and let in, while from an
// address it never used it is refused unchecked (the throttle's known networks; the clock-driven
// 30-minute run is loginguard's TestGuard_NewDeviceGetsInUnderAttack).
func TestMount_AdminGetsInFromAKnownNetwork(t *testing.T) {
	t.Parallel()
	base := serve(t, dbtest.NewURL(t), true, Settings{AdminPasswd: "admin-secret-password-0123"})
	basic := func(from int, pw string) int {
		req, _ := http.NewRequest("GET", base+"/auth/user", nil)
		req.SetBasicAuth("admin", pw)
		resp, err := fromAddr(from).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := basic(140, "admin-secret-password-0123"); st != http.StatusOK {
		t.Fatalf("the admin's first login: %d", st)
	}
	refused := 0
	for a := range 6 {
		for range 10 {
			switch st := basic(141+a, "guess"); st {
			case http.StatusUnauthorized:
			case http.StatusTooManyRequests:
				refused++
			default:
				t.Fatalf("a guess from 127.0.0.%d: %d", 141+a, st)
			}
		}
	}
	if refused == 0 {
		t.Fatal("60 guesses from 6 addresses: none refused; the account cap did not hold")
	}
	if st := basic(150, "admin-secret-password-0123"); st != http.StatusTooManyRequests {
		t.Errorf("the admin from an address it never used: %d, want 429", st)
	}
	if st := basic(140, "admin-secret-password-0123"); st != http.StatusOK {
		t.Errorf("the admin from the address it signed in from: %d, want 200", st)
	}
}

// TestMount_DeviceCookieEndsWithThePassword: the auth surface's device cookie (AUTH-DEVICE) is
// bound to the account's credential (deviceAccounts: the admin's AUTH_ADMIN_PASSWD). With the
// admin's pair locked by guesses at its address, its cookie still gets the right password in;
// on a server whose AUTH_ADMIN_PASSWD changed (same database and secret), that cookie is a
// stranger's and the new password from the locked address gets 429. (The surface registers no
// one, so no one can take over the admin's name.)
func TestMount_DeviceCookieEndsWithThePassword(t *testing.T) {
	t.Parallel()
	db := dbtest.NewURL(t)
	const oldPW, newPW = "admin-secret-password-0123", "admin-secret-password-4567"
	before := serve(t, db, false, Settings{AdminPasswd: oldPW})
	after := serve(t, db, false, Settings{AdminPasswd: newPW})
	basic := func(base, user, pw, cookie string) (int, string) {
		req, _ := http.NewRequest("GET", base+"/auth/user", nil)
		req.SetBasicAuth(user, pw)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: loginlimit.DeviceCookie, Value: cookie})
		}
		resp, err := fromAddr(160).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		kept := ""
		for _, c := range resp.Cookies() {
			if c.Name == loginlimit.DeviceCookie {
				kept = c.Value
			}
		}
		return resp.StatusCode, kept
	}
	st, cookie := basic(before, "admin", oldPW, "")
	if st != http.StatusOK || cookie == "" {
		t.Fatalf("the admin's first login: %d, cookie %q; want 200 and a device cookie", st, cookie)
	}
	for i := range 10 {
		if st, _ := basic(before, "admin", "guess", ""); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, st)
		}
	}
	if st, _ := basic(before, "admin", oldPW, ""); st != http.StatusTooManyRequests {
		t.Fatalf("the right password without the cookie at the locked address: %d, want 429", st)
	}
	if st, _ := basic(before, "admin", oldPW, cookie); st != http.StatusOK {
		t.Fatalf("the right password with the admin's cookie: %d, want 200", st)
	}
	if st, _ := basic(after, "admin", newPW, cookie); st != http.StatusTooManyRequests {
		t.Errorf("the new AUTH_ADMIN_PASSWD with the cookie of the old: %d, want 429 (the cookie ended with the password)", st)
	}
}
