package password

import (
	"context"
	"testing"
)

// FuzzParse feeds arbitrary stored hashes to Parse and Verify: neither may panic, whatever a
// corrupt row holds, and what Parse accepts is in bounds and written back byte for byte.
func FuzzParse(f *testing.F) {
	h := New(Fast)
	good, _ := h.Hash(context.Background(), "pw")
	for _, s := range []string{
		good,
		"",
		"$argon2id$v=19$m=64,t=0,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=0$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=0,t=1,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=4294967295,t=4294967295,p=255$c2FsdA$a2V5",
		"$argon2i$v=19$m=64,t=1,p=1$c2FsdA$a2V5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ph, err := Parse(s)
		if err != nil {
			if err != ErrMalformed {
				t.Fatalf("Parse(%q) error %v, want ErrMalformed", s, err)
			}
			return
		}
		if ph.Time < 1 || ph.Time > MaxTime || ph.Threads < 1 || ph.Threads > MaxThreads ||
			ph.Memory < 8*uint32(ph.Threads) || ph.Memory > MaxMemory {
			t.Fatalf("Parse(%q) accepted out-of-bounds params %+v", s, ph.Params)
		}
		if ph.String() != s {
			t.Fatalf("Parse(%q) is not canonical: written back as %q", s, ph.String())
		}
		// Verifying costs what the hash says; keep the fuzzer fast by checking only cheap ones.
		if ph.Memory <= 1024 && ph.Time <= 2 {
			if _, err := h.Verify(context.Background(), s, "pw"); err != nil {
				t.Fatalf("Verify against accepted %q: %v", s, err)
			}
		}
	})
}
