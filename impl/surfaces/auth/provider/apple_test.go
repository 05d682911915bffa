package provider_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func addApple(t *testing.T, s *site) *providertest.Apple {
	t.Helper()
	return addAppleMode(t, s, "")
}

// addAppleMode registers the Apple provider with the given ResponseMode ("" for the default).
func addAppleMode(t *testing.T, s *site, mode string) *providertest.Apple {
	t.Helper()
	p8, pub := providertest.GenerateP8(t)
	fake := providertest.NewApple(t, "com.example.web", "TEAM123456", "KEY1234567", pub)
	path := filepath.Join(t.TempDir(), "AuthKey_KEY1234567.p8")
	if err := os.WriteFile(path, p8, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := provider.NewApple(s.params("", ""), provider.AppleConfig{
		ClientID: fake.ClientID, TeamID: fake.TeamID, KeyID: fake.KeyID, PrivateKey: appleid.LoadFromFile(path),
		ResponseMode: mode,
		AuthURL:      fake.AuthURL(), TokenURL: fake.TokenURL(), KeysURL: fake.KeysURL(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	return fake
}

// appleLogin runs a login through Apple's form_post: the site's login redirects to Apple, Apple's
// page posts the form back to the callback, the callback bounces to GET and finishes.
func appleLogin(t *testing.T, s *site, query string) (*http.Response, []byte) {
	t.Helper()
	resp, err := s.browser.Get(s.URL + "/auth/apple/login" + query)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("apple authorize page: %d", resp.StatusCode)
	}
	resp, err = providertest.SubmitFormPost(s.browser, resp)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestApple_LoginFlow(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := addApple(t, s)
	fake.SetProfile(providertest.Profile{ID: "001122.0f1e2d3c4b5a.0911", Name: "Tim Example", Email: "t@privaterelay.appleid.com"})
	var visited []string
	s.browser.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
		visited = append(visited, r.URL.String())
		return nil
	}
	resp, body := appleLogin(t, s, "?from="+url.QueryEscape(s.landing+"/done"))
	if resp.StatusCode != http.StatusOK || string(body) != "landing page" {
		t.Fatalf("login ended at %s with %d: %s", resp.Request.URL, resp.StatusCode, body)
	}
	id := token.UserID("apple", "001122.0f1e2d3c4b5a.0911")
	s.wantLoggedIn(token.User{ID: id, Name: "Tim Example"})
	// The form_post's e-mail address is not put into the URL the callback bounces to.
	for _, u := range visited {
		if strings.Contains(u, "privaterelay") {
			t.Fatalf("the user's e-mail address is in a URL: %s", u)
		}
	}

	// Later logins bring no name: the same user id, a stable pseudonym as name.
	s2 := s.newBrowser()
	s.browser = s2
	resp, body = appleLogin(t, s, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second login: %d %s", resp.StatusCode, body)
	}
	_, u := s.me()
	if u.ID != id || u.Name == "" || u.Name == "Tim Example" {
		t.Fatalf("second login user %+v", u)
	}
}

func TestApple_Refusals(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		name   string
		fail   providertest.Failures
		status int
		code   string
	}{
		{"user cancels", providertest.Failures{Deny: true}, http.StatusUnauthorized, provider.CodeProviderError},
		{"token endpoint refuses", providertest.Failures{Token: true}, http.StatusBadGateway, provider.CodeExchangeFailed},
		{"id_token forged", providertest.Failures{Info: true}, http.StatusBadGateway, provider.CodeUserInfoFailed},
		{"id_token without sub", providertest.Failures{InfoNoID: true}, http.StatusBadGateway, provider.CodeUserInfoFailed},
	} {
		s := newSite(t)
		fake := addApple(t, s)
		fake.Fail(f.fail)
		resp, body := appleLogin(t, s, "")
		if resp.StatusCode != f.status || errorBody(t, body) != f.code {
			t.Fatalf("%s: %d %s", f.name, resp.StatusCode, body)
		}
		s.wantLoggedOut()
	}
	// A form post whose state is not this browser's.
	s := newSite(t)
	addApple(t, s)
	resp, err := s.browser.PostForm(s.URL+"/auth/apple/callback", map[string][]string{"code": {"c1"}, "state": {"forged"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("forged state: %d", resp.StatusCode)
	}
}

// TestApple_Registration: the key is loaded at registration, and a bad one fails it.
func TestApple_Registration(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p8, _ := providertest.GenerateP8(t)
	for name, c := range map[string]provider.AppleConfig{
		"missing key file": {ClientID: "c", TeamID: "t", KeyID: "k", PrivateKey: appleid.LoadFromFile(filepath.Join(t.TempDir(), "none.p8"))},
		"garbage key":      {ClientID: "c", TeamID: "t", KeyID: "k", PrivateKey: appleid.LoadFromBytes("not a key")},
		"no key id":        {ClientID: "c", TeamID: "t", PrivateKey: appleid.LoadFromBytes(p8)},
		"no client id":     {TeamID: "t", KeyID: "k", PrivateKey: appleid.LoadFromBytes(p8)},
		"no team id":       {ClientID: "c", KeyID: "k", PrivateKey: appleid.LoadFromBytes(p8)},
		"no key loader":    {ClientID: "c", TeamID: "t", KeyID: "k"},
		"bad mode":         {ClientID: "c", TeamID: "t", KeyID: "k", PrivateKey: appleid.LoadFromBytes(p8), ResponseMode: "fragment"},
	} {
		if _, err := provider.NewApple(s.params("", ""), c); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	if _, err := provider.NewApple(s.params("", ""), provider.AppleConfig{ClientID: "c", TeamID: "t", KeyID: "k", PrivateKey: appleid.LoadFromBytes(p8)}); err != nil {
		t.Fatal(err)
	}
}

// TestApple_QueryMode: with ResponseMode "query" Apple redirects back with the code in the query;
// no name is asked for (Apple only sends it with form_post), so the user is known by sub alone.
func TestApple_QueryMode(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := addAppleMode(t, s, "query")
	fake.SetProfile(providertest.Profile{ID: "000777.aa.0001", Name: "Never Sent"})
	resp, body := s.get("/auth/apple/login")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query-mode login: %d %s", resp.StatusCode, body)
	}
	_, u := s.me()
	if u.ID != token.UserID("apple", "000777.aa.0001") || u.Name == "" || u.Name == "Never Sent" {
		t.Fatalf("query-mode user %+v", u)
	}
}
