package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// deviceLogin is a password grant from a client that sends cookie (its orders_device value, ""
// for none); it returns the status and the device cookie set, if any.
func (e *env) deviceLogin(username, pw, cookie string) (status int, kept string) {
	e.t.Helper()
	form := url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"username": {username}, "password": {pw}}
	req, _ := http.NewRequest("POST", e.url+"/oauth/token?"+form.Encode(), nil)
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

// TestOAuth_DeviceCookieIsTheAccountAsItIs: orders' device cookie is bound to the user's id and
// password hash (device.Account, through Service.DeviceAccount). With her pair locked by others'
// guesses at her address, her cookie still gets her right password in; once her password changes
// the cookie is a stranger's and gets 429 like any; and a user who registers her username after
// she gave it up (here a rename in the database: orders has no rename or delete call) does not
// inherit the cookie either.
func TestOAuth_DeviceCookieIsTheAccountAsItIs(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, nil, httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, Hasher: sharedHasher(),
		Devices: device.NewSigner([]byte("test secret"), "orders", 0, nil)}})
	ctx := context.Background()
	e.register("alice", "alice-password", "Customer")
	status, cookie := e.deviceLogin("alice", "alice-password", "")
	if status != http.StatusOK || cookie == "" {
		t.Fatalf("her first login: %d, cookie %q; want 200 and a device cookie", status, cookie)
	}
	e.failLogins("alice", 10) // her pair at this address locked
	if status, _ := e.deviceLogin("alice", "alice-password", ""); status != http.StatusTooManyRequests {
		t.Fatalf("her right password without the cookie: %d, want 429", status)
	}
	if status, kept := e.deviceLogin("alice", "alice-password", cookie); status != http.StatusOK || kept != "" {
		t.Fatalf("her right password with her cookie: %d (new cookie %q), want 200 keeping hers", status, kept)
	}

	// Her password changes (orders has no call for it; as an operator's reset would).
	newHash, err := sharedHasher().Hash(ctx, "alice-new-password")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE order_users SET password_hash = $1 WHERE username = 'alice'`, newHash); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.deviceLogin("alice", "alice-new-password", cookie); status != http.StatusTooManyRequests {
		t.Errorf("her new password with the cookie of her old one: %d, want 429 (the cookie ended with the password)", status)
	}

	// Another user takes the name she gave up.
	if _, err := e.pool.Exec(ctx, `UPDATE order_users SET username = 'alice-gone' WHERE username = 'alice'`); err != nil {
		t.Fatal(err)
	}
	e.register("alice", "mallory-password", "Customer")
	if status, _ := e.deviceLogin("alice", "mallory-password", cookie); status != http.StatusTooManyRequests {
		t.Errorf("the new alice with the old alice's cookie: %d, want 429 (the cookie is not hers)", status)
	}
	// A cookie the new user earns is hers alone: from another address, her login hands one out.
	other := e.from("127.0.0.9")
	status, fresh := other.deviceLogin("alice", "mallory-password", "")
	if status != http.StatusOK || fresh == "" {
		t.Fatalf("the new alice from another address: %d, cookie %q", status, fresh)
	}
	if status, _ := e.deviceLogin("alice", "mallory-password", fresh); status != http.StatusOK {
		t.Errorf("the new alice's own cookie at the locked address: %d, want 200", status)
	}
}
