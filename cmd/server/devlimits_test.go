package main

import (
	"slices"
	"testing"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// TestLoadConfig_DevModeLimitsAreGenerous: dev mode gives the registration and mail caps and the
// address slowing generous defaults from the settings table (devLimit) and names them for the
// start-up log; prod keeps the strict ones; a limit set explicitly, in the environment or as a
// flag, applies in every mode and is not named.
func TestLoadConfig_DevModeLimitsAreGenerous(t *testing.T) {
	prod := []string{"-mode", "prod", "-orders-client-id", prodClientID, "-orders-client-secret", prodClientSecret, "-auth-secret", prodAuthSecret}
	limits := func(c Config) [4]int {
		return [4]int{c.Logins.SignupMax, c.Auth.ConfirmPerRecipient, c.Auth.ConfirmPerClient, c.Logins.AddressMax}
	}
	dev, err := LoadConfig([]string{"-mode", "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := limits(dev), [4]int{devSignupMax, devConfirmPerRecipient, devConfirmPerClient, devAddressMax}; got != want {
		t.Errorf("dev defaults %v, want %v", got, want)
	}
	for _, named := range []string{"SIGNUP_MAX=1000", "AUTH_CONFIRM_PER_RECIPIENT=1000", "AUTH_CONFIRM_PER_CLIENT=1000", "LOGIN_ADDRESS_MAX=10000", "AUTH_SECRET=***"} {
		if !slices.Contains(dev.DevDefaults, named) {
			t.Errorf("dev mode's defaults named %v, want %s among them", dev.DevDefaults, named)
		}
	}
	if dev.Logins.AccountMax != throttle.DefaultAccountMax {
		t.Errorf("dev LOGIN_ACCOUNT_MAX %d, want prod's %d (a test suite does not guess one account 50 times)", dev.Logins.AccountMax, throttle.DefaultAccountMax)
	}
	p, err := LoadConfig(prod)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := limits(p), [4]int{loginguard.DefaultSignupMax, provider.DefaultSendsPerRecipient, provider.DefaultSendsPerClient, throttle.DefaultAddressMax}; got != want || len(p.DevDefaults) != 0 {
		t.Errorf("prod defaults %v (dev defaults named %v), want %v and none", got, p.DevDefaults, want)
	}
	t.Setenv("SIGNUP_MAX", "20")
	for _, args := range [][]string{{"-mode", "dev", "-auth-confirm-per-client", "30"}, append(prod, "-auth-confirm-per-client", "30")} {
		c, err := LoadConfig(args)
		if err != nil {
			t.Fatal(err)
		}
		if c.Logins.SignupMax != 20 || c.Auth.ConfirmPerClient != 30 {
			t.Errorf("%v with SIGNUP_MAX=20: SIGNUP_MAX %d, AUTH_CONFIRM_PER_CLIENT %d; want the explicit 20 and 30", args[:2], c.Logins.SignupMax, c.Auth.ConfirmPerClient)
		}
		for _, d := range c.DevDefaults {
			if d == "SIGNUP_MAX=1000" || d == "AUTH_CONFIRM_PER_CLIENT=1000" {
				t.Errorf("%v: %s named as a dev default though it was set", args[:2], d)
			}
		}
	}
}
