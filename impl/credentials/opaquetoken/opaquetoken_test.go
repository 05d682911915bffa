package opaquetoken

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
)

func TestMint_RandomAndHashed(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, hash, err := Mint()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != Len || !WellFormed(tok) || seen[tok] {
			t.Fatalf("token %q: want %d base64url characters, never repeated", tok, Len)
		}
		seen[tok] = true
		sum := sha256.Sum256([]byte(tok))
		if !bytes.Equal(hash, sum[:]) || !bytes.Equal(Hash(tok), sum[:]) {
			t.Fatalf("hash of %q is not its SHA-256", tok)
		}
	}
}

func TestWellFormed(t *testing.T) {
	good, _, _ := Mint()
	for tok, want := range map[string]bool{
		good:                                true,
		strings.Repeat("A", Len):            true,
		strings.Repeat("-_", Len/2) + "z":   true,
		"":                                  false,
		strings.Repeat("A", Len-1):          false,
		strings.Repeat("A", Len+1):          false,
		strings.Repeat("A", Len-1) + "=":    false,
		strings.Repeat("A", Len-1) + "+":    false,
		strings.Repeat("A", Len-1) + "/":    false,
		strings.Repeat("A", Len-2) + "é":    false,
		strings.Repeat("A", Len-1) + "\x00": false,
	} {
		if WellFormed(tok) != want {
			t.Errorf("WellFormed(%q) = %v, want %v", tok, !want, want)
		}
	}
}
