package provider_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// TestParams_DefaultClientIsGuarded: a provider without HTTPClient calls its token and user-info
// endpoints through the guarded outbound client, which refuses a non-public address (here a
// loopback server) and follows no redirect.
func TestParams_DefaultClientIsGuarded(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ts.Close()
	if _, err := (provider.Params{}).Client().Get(ts.URL); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("err = %v, want ErrForbiddenAddress", err)
	}
}
