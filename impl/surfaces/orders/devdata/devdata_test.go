package devdata

import (
	"context"
	"testing"

	"github.com/triadhq/triad/impl/credentials/password"
)

// The demo users' stored hashes are their published passwords at the production cost: a dev
// server's login checks them exactly as a registered user's.
func TestUsers_HashesArePublishedPasswords(t *testing.T) {
	h := password.New(password.Default)
	for _, u := range Users {
		parsed, err := password.Parse(u.Hash)
		if err != nil {
			t.Fatalf("%s: %v", u.Username, err)
		}
		if parsed.Params != password.Default {
			t.Errorf("%s: hash parameters %+v, want password.Default %+v", u.Username, parsed.Params, password.Default)
		}
		if ok, err := h.Verify(context.Background(), u.Hash, u.Password); err != nil || !ok {
			t.Errorf("%s: the stored hash does not verify %q (%v)", u.Username, u.Password, err)
		}
		if ok, _ := h.Verify(context.Background(), u.Hash, u.Password+"x"); ok {
			t.Errorf("%s: the stored hash verifies a wrong password", u.Username)
		}
	}
}
