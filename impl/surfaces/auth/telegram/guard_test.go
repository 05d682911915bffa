package telegram_test

import (
	"context"
	"errors"
	"testing"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
)

// TestNewAPI_DefaultClientIsGuarded: without a client, the API uses the guarded outbound client,
// which refuses a Bot API URL on a non-public address (here the loopback fake).
func TestNewAPI_DefaultClientIsGuarded(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	if _, err := telegram.NewAPI(tok, fake.URL(), nil).GetMe(context.Background()); !errors.Is(err, outbound.ErrForbiddenAddress) {
		t.Fatalf("GetMe: err = %v, want ErrForbiddenAddress", err)
	}
}
