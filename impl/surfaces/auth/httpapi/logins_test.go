package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/triadhq/triad/impl/kit/refusal"
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
