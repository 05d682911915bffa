package oauth1_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/oauth1"
)

// TestConfig_DefaultClientIsGuarded: without HTTPClient, the calls go through the guarded outbound
// client, which refuses a provider on a non-public address (here a loopback server) and only
// reaches it when the caller opts out.
func TestConfig_DefaultClientIsGuarded(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "oauth_token=t&oauth_token_secret=s&oauth_callback_confirmed=true")
	}))
	defer ts.Close()
	c := &oauth1.Config{ConsumerKey: "ck", ConsumerSecret: "cs", RequestTokenURL: ts.URL,
		CallbackURL: "http://site.example/auth/twitter/callback"}
	if _, err := c.RequestToken(context.Background()); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("default client: err = %v, want ErrForbiddenAddress", err)
	}
	c.HTTPClient = outbound.New(outbound.Options{AllowPrivate: true})
	if cr, err := c.RequestToken(context.Background()); err != nil || cr.Token != "t" {
		t.Fatalf("opted out: %+v %v", cr, err)
	}
}
