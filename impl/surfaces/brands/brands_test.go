package brands

import (
	"strings"
	"testing"
)

func TestBrands_CheckEmail(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"ada@example.com", true},
		{"  ada@example.com ", true},
		{"Ada.King+news@sub.example.co.uk", true},
		{"ada@localhost", false},
		{"ada", false},
		{"@example.com", false},
		{"Ada <ada@example.com>", false},
		{"ada@example.com, bob@example.com", false},
		{strings.Repeat("a", 250) + "@example.com", false},
	} {
		var v checks
		checkEmail(&v, c.in)
		if ok := len(v.Problems) == 0; ok != c.ok {
			t.Errorf("checkEmail(%q) ok = %v, want %v (%v)", c.in, ok, c.ok, v.Problems)
		}
	}
}

func TestBrands_CheckName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"  Ada  ", "Ada", true},
		{strings.Repeat("é", MaxNameLen), strings.Repeat("é", MaxNameLen), true}, // characters, not bytes
		{strings.Repeat("é", MaxNameLen+1), "", false},
		{"   ", "", false},
		{"Ada\x00", "", false},
		{"Ada\nKing", "", false},
	} {
		var v checks
		got := checkName(&v, "name", c.in, MaxNameLen)
		if ok := len(v.Problems) == 0; ok != c.ok || (ok && got != c.want) {
			t.Errorf("checkName(%q) = %q ok=%v, want %q ok=%v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestBrands_CheckPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"1234567":                false,
		"12345678":               true,
		strings.Repeat("ü", 128): true,
		strings.Repeat("p", 129): false,
		"":                       false,
	} {
		var v checks
		checkPassword(&v, "password", pw)
		if got := len(v.Problems) == 0; got != ok {
			t.Errorf("checkPassword(len %d) ok = %v, want %v", len(pw), got, ok)
		}
	}
}

func TestBrands_CheckURL(t *testing.T) {
	for u, ok := range map[string]bool{
		"":                          true,
		"https://example.com/a.jpg": true,
		"http://example.com":        true,
		"javascript:alert(1)":       false,
		"//example.com":             false,
		"ftp://example.com":         false,
		"example.com":               false,
	} {
		var v checks
		checkURL(&v, "url", u)
		if got := len(v.Problems) == 0; got != ok {
			t.Errorf("checkURL(%q) ok = %v, want %v", u, got, ok)
		}
	}
}

func TestBrands_ValidID(t *testing.T) {
	for id, ok := range map[string]bool{
		"655e1f2a0000000000000001":  true,
		"655E1F2A0000000000000001":  false,
		"655e1f2a000000000000001":   false,
		"655e1f2a00000000000000010": false,
		"655e1f2a00000000000000zz":  false,
		"":                          false,
	} {
		if ValidID(id) != ok {
			t.Errorf("ValidID(%q) = %v", id, !ok)
		}
	}
}
