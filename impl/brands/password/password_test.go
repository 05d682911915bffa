package password

import (
	"context"
	"strings"
	"testing"
)

func TestPassword_HashVerifies(t *testing.T) {
	h := New(Fast)
	ctx := context.Background()
	stored, err := h.Hash(ctx, "correct-horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not a PHC argon2id string with the configured cost", stored)
	}
	if strings.Contains(stored, "correct-horse") {
		t.Fatal("hash contains the password")
	}
	ok, err := h.Verify(ctx, stored, "correct-horse")
	if err != nil || !ok {
		t.Fatalf("right password: ok=%v err=%v", ok, err)
	}
	ok, err = h.Verify(ctx, stored, "wrong-horse")
	if err != nil || ok {
		t.Fatalf("wrong password: ok=%v err=%v", ok, err)
	}
}

func TestPassword_SaltedPerHash(t *testing.T) {
	h := New(Fast)
	a, _ := h.Hash(context.Background(), "same")
	b, _ := h.Hash(context.Background(), "same")
	if a == b {
		t.Fatal("two hashes of one password are equal: salt is not random")
	}
}

func TestPassword_OldParamsStillVerify(t *testing.T) {
	old := New(Fast)
	stored, _ := old.Hash(context.Background(), "pw-12345")
	ok, err := New(Params{Time: 2, Memory: 128, Threads: 1}).Verify(context.Background(), stored, "pw-12345")
	if err != nil || !ok {
		t.Fatalf("hash made with other params: ok=%v err=%v", ok, err)
	}
}

func TestPassword_UnknownUserIsFalse(t *testing.T) {
	ok, err := New(Fast).Verify(context.Background(), "", "anything")
	if err != nil || ok {
		t.Fatalf("empty stored hash: ok=%v err=%v", ok, err)
	}
}

func TestPassword_Malformed(t *testing.T) {
	for _, s := range []string{"plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdA$a2V5", "$argon2id$v=18$m=64,t=1,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=64,t=0,p=1$c2FsdA$a2V5"} {
		if _, err := New(Fast).Verify(context.Background(), s, "x"); err != ErrMalformed {
			t.Errorf("%q: err = %v, want ErrMalformed", s, err)
		}
	}
}
