package provider_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func addTwitter(t *testing.T, s *site) *providertest.Twitter {
	t.Helper()
	fake := providertest.NewTwitter(t, "consumer-key", "consumer-secret")
	h := provider.NewTwitter(s.params(fake.ConsumerKey, fake.ConsumerSecret), provider.TwitterEndpoints{
		RequestTokenURL: fake.RequestTokenURL(), AuthorizeURL: fake.AuthorizeURL(),
		AccessTokenURL: fake.AccessTokenURL(), InfoURL: fake.InfoURL()})
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	return fake
}

func TestTwitter_LoginFlow(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := addTwitter(t, s)
	fake.SetProfile(providertest.Profile{ID: "1278640373", Name: "Jack Example", Login: "jack",
		Picture: "https://pbs.twimg.com/profile_images/1/a_normal.jpg"})
	resp, body := s.get("/auth/twitter/login?from=" + url.QueryEscape(s.landing+"/done"))
	if resp.StatusCode != http.StatusOK || string(body) != "landing page" {
		t.Fatalf("login ended at %s with %d: %s", resp.Request.URL, resp.StatusCode, body)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("twitter", "1278640373"), Name: "Jack Example",
		Picture: "https://pbs.twimg.com/profile_images/1/a_normal.jpg"})
}

func TestTwitter_Refusals(t *testing.T) {
	t.Parallel()
	for _, f := range providerFailures("access token", "verify_credentials") {
		s := newSite(t)
		fake := addTwitter(t, s)
		fake.Fail(f.fail)
		resp, body := s.get("/auth/twitter/login")
		if resp.StatusCode != f.status || errorBody(t, body) != f.code {
			t.Fatalf("%s: %d %s", f.name, resp.StatusCode, body)
		}
		s.wantLoggedOut()
	}

	// A callback for another request token than this browser's is a bad state.
	s := newSite(t)
	addTwitter(t, s)
	noFollow := &http.Client{Jar: s.browser.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.URL + "/auth/twitter/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, body := s.get("/auth/twitter/callback?" + url.Values{"oauth_token": {"other"}, "oauth_verifier": {"v"}}.Encode())
	if resp.StatusCode != http.StatusBadRequest || errorBody(t, body) != provider.CodeBadState {
		t.Fatalf("foreign token: %d %s", resp.StatusCode, body)
	}
	s.wantLoggedOut()
}

// TestTwitter_WrongConsumerSecret: the fake checks signatures, so a misconfigured secret cannot
// even start a login.
func TestTwitter_WrongConsumerSecret(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := providertest.NewTwitter(t, "consumer-key", "consumer-secret")
	h := provider.NewTwitter(s.params("consumer-key", "wrong"), provider.TwitterEndpoints{
		RequestTokenURL: fake.RequestTokenURL(), AuthorizeURL: fake.AuthorizeURL(),
		AccessTokenURL: fake.AccessTokenURL(), InfoURL: fake.InfoURL()})
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	resp, body := s.get("/auth/twitter/login")
	if resp.StatusCode != http.StatusBadGateway || errorBody(t, body) != provider.CodeExchangeFailed {
		t.Fatalf("wrong secret: %d %s", resp.StatusCode, body)
	}
}
