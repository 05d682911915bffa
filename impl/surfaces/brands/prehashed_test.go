package brands

import (
	"context"
	"errors"
	"testing"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestWithHash_AdminAndUserLogInWithThePassword: dev mode's admin and demo user, stored with
// precomputed hashes, log in with the passwords hashed; a malformed hash or a bad email is refused.
func TestWithHash_AdminAndUserLogInWithThePassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := password.New(password.Fast)
	svc := NewService(dbtest.New(t), Config{Hasher: h})
	hash, err := h.Hash(ctx, "kit-password")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := svc.EnsureAdminWithHash(ctx, "boss@brands.test", "Boss", hash); err != nil || !changed {
		t.Fatalf("EnsureAdminWithHash: %v, %v; want an admin created", changed, err)
	}
	if p, err := svc.Authenticate(ctx, "boss@brands.test", "kit-password"); err != nil || !p.IsAdmin {
		t.Fatalf("the admin's login: %+v, %v", p, err)
	}
	reg, err := svc.RegisterWithHash(ctx, "Kit", "kit@brands.test", hash)
	if err != nil || reg.Token == "" {
		t.Fatalf("RegisterWithHash: %+v, %v; want a user and its first token", reg, err)
	}
	if p, err := svc.Authenticate(ctx, "kit@brands.test", "kit-password"); err != nil || p.IsAdmin {
		t.Fatalf("the user's login: %+v, %v", p, err)
	}
	for name, err := range map[string]error{
		"malformed hash, admin": second(svc.EnsureAdminWithHash(ctx, "b2@brands.test", "B", "$argon2id$nonsense")),
		"malformed hash, user":  second(svc.RegisterWithHash(ctx, "K2", "k2@brands.test", "plain")),
	} {
		if !errors.Is(err, password.ErrMalformed) {
			t.Errorf("%s: %v, want password.ErrMalformed", name, err)
		}
	}
	if _, err := svc.EnsureAdminWithHash(ctx, "not an email", "B", hash); err == nil {
		t.Error("EnsureAdminWithHash took a bad email")
	}
	if _, err := svc.RegisterWithHash(ctx, "K3", "not an email", hash); err == nil {
		t.Error("RegisterWithHash took a bad email")
	}
}

func second[T any](_ T, err error) error { return err }
