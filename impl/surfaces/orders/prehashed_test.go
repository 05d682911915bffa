package orders

import (
	"context"
	"errors"
	"testing"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestRegisterWithHash_LogsInWithThePassword: a user stored with a precomputed hash (dev mode's
// demo users) logs in with the password hashed, gets its role's starting balance, and a malformed
// hash or a bad name or role is refused before anything is stored.
func TestRegisterWithHash_LogsInWithThePassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := password.New(password.Fast)
	svc := NewService(dbtest.New(t), Config{Hasher: h})
	hash, err := h.Hash(ctx, "erin-password")
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.RegisterWithHash(ctx, "erin", hash, Customer)
	if err != nil {
		t.Fatal(err)
	}
	if u.Balance != InitialBalance(Customer) {
		t.Errorf("balance %d, want the customer's starting %d", u.Balance, InitialBalance(Customer))
	}
	if got, err := svc.Authenticate(ctx, "erin", "erin-password"); err != nil || got.ID != u.ID {
		t.Fatalf("login with the hashed password: %+v, %v", got, err)
	}
	if _, err := svc.RegisterWithHash(ctx, "frank", "not-a-phc-string", Customer); !errors.Is(err, password.ErrMalformed) {
		t.Errorf("a malformed hash: %v, want password.ErrMalformed", err)
	}
	if _, err := svc.RegisterWithHash(ctx, "x", hash, "Admin"); err == nil {
		t.Error("a too short name and an unknown role were not refused")
	}
	if _, err := svc.Authenticate(ctx, "frank", "erin-password"); err == nil {
		t.Error("a refused registration stored its user")
	}
}
