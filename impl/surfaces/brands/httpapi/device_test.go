package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
)

// deviceLogin is a login from a client that sends cookie (its brands_device value, "" for none);
// it returns the status, the access token of a 200 and the device cookie set, if any.
func (e *env) deviceLogin(email, pw, cookie string) (status int, kept string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/api/user/login", strings.NewReader(url.Values{"email": {email}, "password": {pw}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: httpapi.DeviceCookie, Value: cookie})
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	for _, c := range res.Cookies() {
		if c.Name == httpapi.DeviceCookie {
			kept = c.Value
		}
	}
	return res.StatusCode, kept
}

// TestLogin_DeviceCookieIsTheAccountAsItIs: brands' device cookie is bound to the user's id and
// password hash (Service.DeviceAccount). With her pair locked by guesses at her address, her
// cookie gets her right password in; after she changes her password (POST /api/user/reset) the
// cookie counts for nothing; and a user who registers the email she moved away from
// (POST /api/user/edit) does not inherit it.
func TestLogin_DeviceCookieIsTheAccountAsItIs(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httpapi.Options{Devices: device.NewSigner([]byte("test secret"), "brands", 0, nil)})
	e.register("Alice", "alice@example.com", "alice-password-1")
	status, cookie := e.deviceLogin("alice@example.com", "alice-password-1", "")
	if status != http.StatusOK || cookie == "" {
		t.Fatalf("her first login: %d, cookie %q; want 200 and a device cookie", status, cookie)
	}
	for i := range 10 {
		if st, _ := e.deviceLogin("alice@example.com", "wrong-password", ""); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, st)
		}
	}
	if st, _ := e.deviceLogin("alice@example.com", "alice-password-1", ""); st != http.StatusTooManyRequests {
		t.Fatalf("her right password without the cookie at the locked address: %d, want 429", st)
	}
	if st, _ := e.deviceLogin("alice@example.com", "alice-password-1", cookie); st != http.StatusOK {
		t.Fatalf("her right password with her cookie: %d, want 200", st)
	}

	// She changes her password, from another address (hers is locked without the cookie).
	other := e.from("127.0.0.9")
	tok := other.login("alice@example.com", "alice-password-1")
	other.want(other.do(request{method: "POST", path: "/api/user/reset", token: tok,
		form: url.Values{"currentPassword": {"alice-password-1"}, "newPassword": {"alice-password-2"}}}), http.StatusOK)
	if st, _ := e.deviceLogin("alice@example.com", "alice-password-2", cookie); st != http.StatusTooManyRequests {
		t.Errorf("her new password with the cookie of her old one: %d, want 429 (the cookie ended with the password)", st)
	}

	// She moves to another email; someone registers the one she gave up.
	other.want(other.do(request{method: "PUT", path: "/api/user/edit", token: tok,
		form: url.Values{"email": {"alice@elsewhere.example"}}}), http.StatusOK)
	e.register("Mallory", "alice@example.com", "mallory-password")
	if st, _ := e.deviceLogin("alice@example.com", "mallory-password", cookie); st != http.StatusTooManyRequests {
		t.Errorf("the email's new user with its old user's cookie: %d, want 429 (the cookie is not hers)", st)
	}
}
