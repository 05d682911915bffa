package devdata

import (
	"context"
	"testing"

	"github.com/triadhq/triad/impl/credentials/password"
)

// The admin's and the demo user's stored hashes are their published passwords at the production
// cost: a dev server's login checks them exactly as a registered user's.
func TestHashes_ArePublishedPasswords(t *testing.T) {
	h := password.New(password.Default)
	for pw, hash := range map[string]string{AdminPassword: AdminHash, DemoPassword: DemoHash} {
		parsed, err := password.Parse(hash)
		if err != nil {
			t.Fatalf("%s: %v", pw, err)
		}
		if parsed.Params != password.Default {
			t.Errorf("%s: hash parameters %+v, want password.Default %+v", pw, parsed.Params, password.Default)
		}
		if ok, err := h.Verify(context.Background(), hash, pw); err != nil || !ok {
			t.Errorf("the stored hash does not verify %q (%v)", pw, err)
		}
		if ok, _ := h.Verify(context.Background(), hash, pw+"x"); ok {
			t.Errorf("the hash of %q verifies a wrong password", pw)
		}
	}
}
