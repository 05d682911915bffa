package oauthserver_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
)

// TestServer_PathsAndLookup: the endpoints move to Paths (wildcards included), the user-info
// endpoint can be left out, and Lookup answers what it would have.
func TestServer_PathsAndLookup(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, oauthserver.Options{DefaultUser: "erin",
		Paths: oauthserver.Paths{Authorize: "/{tenant}/authorize", Token: "/{tenant}/token", UserInfo: "-"}})
	cfg := config(srv)
	cfg.Endpoint = oauth2.Endpoint{AuthURL: ts.URL + "/common/authorize", TokenURL: ts.URL + "/common/token", AuthStyle: oauth2.AuthStyleInHeader}
	loc := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil)
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := srv.Lookup(tok.AccessToken); !ok || u.Name != "erin" {
		t.Fatalf("Lookup: %+v %v", u, ok)
	}
	if _, ok := srv.Lookup("not-a-token"); ok {
		t.Fatal("Lookup accepts an unknown token")
	}
	for _, p := range []string{oauthserver.AuthorizePath, oauthserver.UserInfoPath} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (moved or not served)", p, resp.StatusCode)
		}
	}
}

// TestServer_RequirePKCE: without a code_challenge the request goes back to the client refused.
func TestServer_RequirePKCE(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{RequirePKCE: true})
	cfg := config(srv)
	loc := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil)
	if loc.Query().Get("error") != "invalid_request" || loc.Query().Get("code") != "" {
		t.Fatalf("no PKCE: %v", loc)
	}
	loc = redirected(t, http.MethodGet, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), nil)
	if loc.Query().Get("code") == "" {
		t.Fatalf("with PKCE: %v", loc)
	}
}

// TestServer_Approve: Approve sees each validated request, picks the user or denies it.
func TestServer_Approve(t *testing.T) {
	t.Parallel()
	var deny atomic.Bool
	srv, _ := start(t, oauthserver.Options{Approve: func(r *http.Request) (oauthserver.User, bool) {
		return oauthserver.User{ID: "7", Name: "from " + r.URL.Query().Get("scope")}, !deny.Load()
	}})
	cfg := config(srv)
	cfg.Scopes = []string{"profile"}
	loc := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil)
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := srv.Lookup(tok.AccessToken); u.Name != "from profile" {
		t.Fatalf("approved user %+v", u)
	}
	deny.Store(true)
	loc = redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil)
	if loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "s" {
		t.Fatalf("denied: %v", loc)
	}
}

// TestServer_MatchRedirectURI replaces the exact comparison, for test peers of any site.
func TestServer_MatchRedirectURI(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, oauthserver.Options{Clients: []oauthserver.Client{{ID: "cid", Secret: "csecret",
		MatchRedirectURI: func(u string) bool { return strings.HasPrefix(u, "http://site.test/") }}}})
	cfg := config(srv)
	cfg.RedirectURL = "http://site.test/any/callback"
	if loc := redirected(t, http.MethodGet, cfg.AuthCodeURL("s"), nil); loc.Host != "site.test" || loc.Query().Get("code") == "" {
		t.Fatalf("matching redirect: %v", loc)
	}
	cfg.RedirectURL = "http://other.test/callback"
	resp, err := noFollow().Get(cfg.AuthCodeURL("s"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Fatalf("other redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestServer_AnyUserPage: the development page asks for a name only, suggests DefaultUser, names
// the client's origin in form-action, and Authenticate still maps the name; the request may
// travel in the POST body (RFC 6749 §3.1), and a body value wins over the URL's.
func TestServer_AnyUserPage(t *testing.T) {
	t.Parallel()
	srv, ts := start(t, oauthserver.Options{WithLoginPage: true, AnyUser: true, DefaultUser: "dev_user",
		Authenticate: func(name, password string) (oauthserver.User, bool) {
			return oauthserver.User{ID: name, Name: name, Email: name + "@example.com"}, password == ""
		}})
	cfg := config(srv)
	authURL := cfg.AuthCodeURL("st")
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(page), `name="password"`) || !strings.Contains(string(page), `value="dev_user"`) {
		t.Fatalf("page %d: %s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' http://client.example;") {
		t.Fatalf("CSP %q", csp)
	}
	body := url.Values{"client_id": {"cid"}, "response_type": {"code"}, "redirect_uri": {redirectURI}, "state": {"body"}, "username": {"  frank "}}
	loc := redirected(t, http.MethodPost, ts.URL+oauthserver.AuthorizePath+"?state=query", body)
	if loc.Query().Get("state") != "body" {
		t.Fatalf("state %q, want the body's", loc.Query().Get("state"))
	}
	tok, err := cfg.Exchange(context.Background(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := srv.Lookup(tok.AccessToken); u != (oauthserver.User{ID: "frank", Name: "frank", Email: "frank@example.com"}) {
		t.Fatalf("user %+v", u)
	}
	body.Set("redirect_uri", "http://evil.example/cb")
	resp, err = noFollow().PostForm(authURL, body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a foreign redirect_uri in the body: %d", resp.StatusCode)
	}
}
