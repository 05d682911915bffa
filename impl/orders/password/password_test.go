package password

import (
	"context"
	"strings"
	"testing"
)

func TestHasher_RoundTrip(t *testing.T) {
	h := NewHasher(Default)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(stored, "correct horse") {
		t.Fatalf("unexpected hash format %q", stored)
	}
	if ok, err := h.Verify(ctx, stored, "correct horse"); !ok || err != nil {
		t.Fatalf("right password refused: %v %v", ok, err)
	}
	if ok, _ := h.Verify(ctx, stored, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	if ok, _ := h.Verify(ctx, "", "anything"); ok {
		t.Fatal("unknown user accepted")
	}
	other, _ := h.Hash(ctx, "correct horse")
	if other == stored {
		t.Fatal("two hashes of one password are equal: salt missing")
	}
	if _, err := h.Verify(ctx, "$bcrypt$x", "x"); err != ErrMalformed {
		t.Fatalf("malformed hash: %v", err)
	}
}
