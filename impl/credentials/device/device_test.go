package device

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSigner_TokenIsTheAccountsOnSurfaceOnly: a token checks for the account it was issued for
// (in any spelling), on the Signer of its surface and key, until it expires; it is due for renewal
// past half its life; anything altered, another account, surface or key, or an expired token is
// refused.
func TestSigner_TokenIsTheAccountsOnSurfaceOnly(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	s := NewSigner([]byte("secret"), "orders", time.Hour, clock)
	tok := s.Issue(NameOnly("Alice"))
	id, renew, ok := s.Check(tok, NameOnly(" alice "))
	if !ok || renew || id == "" {
		t.Fatalf("Check of a fresh token: %q %v %v", id, renew, ok)
	}
	if tok2 := s.Issue(NameOnly("alice")); tok2 == tok {
		t.Error("two issues gave one token")
	} else if id2, _, _ := s.Check(tok2, NameOnly("alice")); id2 == id {
		t.Error("two issues name one device")
	}
	for name, c := range map[string]struct {
		s        *Signer
		tok, acc string
	}{
		"another account": {s, tok, "bob"},
		"another surface": {NewSigner([]byte("secret"), "brands", time.Hour, clock), tok, "alice"},
		"another key":     {NewSigner([]byte("other"), "orders", time.Hour, clock), tok, "alice"},
		"altered nonce":   {s, strings.Replace(tok, ".", ".A", 2), "alice"},
		"longer life":     {s, "v1.9999999999" + tok[strings.Index(tok[3:], ".")+3:], "alice"},
		"empty":           {s, "", "alice"},
		"garbage":         {s, "v1.x.y.z", "alice"},
	} {
		if _, _, ok := c.s.Check(c.tok, NameOnly(c.acc)); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	now = now.Add(31 * time.Minute)
	if _, renew, ok := s.Check(tok, NameOnly("alice")); !ok || !renew {
		t.Errorf("past half its life: ok %v renew %v, want both", ok, renew)
	}
	now = now.Add(30 * time.Minute)
	if _, _, ok := s.Check(tok, NameOnly("alice")); ok {
		t.Error("expired token accepted")
	}
}

// TestSigner_DuplicateCookiesTheValidOneCounts: a client sending two cookies of the name (a stale
// or foreign one first) is the device its valid one names; none valid is no device.
func TestSigner_DuplicateCookiesTheValidOneCounts(t *testing.T) {
	s := NewSigner([]byte("k"), "test", 0, nil)
	alice, bob := s.Issue(NameOnly("alice")), s.Issue(NameOnly("bob"))
	cookies := func(vals ...string) []*http.Cookie {
		var out []*http.Cookie
		for _, v := range vals {
			out = append(out, &http.Cookie{Name: "orders_device", Value: v})
		}
		return out
	}
	wantID, _, _ := s.Check(alice, NameOnly("alice"))
	for _, tc := range []struct {
		name string
		vals []string
		ok   bool
	}{
		{"hers alone", []string{alice}, true},
		{"another account's first", []string{bob, alice}, true},
		{"garbage first", []string{"v1.garbage", alice}, true},
		{"hers first", []string{alice, bob}, true},
		{"none of hers", []string{bob, "x"}, false},
		{"none", nil, false},
	} {
		id, _, ok := s.CheckAny(Presented(cookies(tc.vals...)), NameOnly("alice"))
		if ok != tc.ok || ok && id != wantID {
			t.Errorf("%s: CheckAny = %q %v, want ok %v (id %q)", tc.name, id, ok, tc.ok, wantID)
		}
	}
}

// TestSigner_TokenIsTheAccountAsItWas: a token bound to an account's id and credential version
// checks for that account only while both are unchanged: a new password (version), another
// account holding the name later (id), or the name alone is not the account it was issued to.
func TestSigner_TokenIsTheAccountAsItWas(t *testing.T) {
	s := NewSigner([]byte("k"), "test", 0, nil)
	alice := Account{Name: "alice", ID: "17", Version: "$argon2id$...$hash-a"}
	tok := s.Issue(alice)
	if _, _, ok := s.Check(tok, Account{Name: "ALICE", ID: "17", Version: alice.Version}); !ok {
		t.Fatal("the account as it was: refused")
	}
	for name, a := range map[string]Account{
		"a new password":            {Name: "alice", ID: "17", Version: "$argon2id$...$hash-b"},
		"another account, the name": {Name: "alice", ID: "18", Version: alice.Version},
		"the name alone":            NameOnly("alice"),
		"id and version run on":     {Name: "alice", ID: "17|$argon2id$...$hash-a"},
		"another name":              {Name: "bob", ID: "17", Version: alice.Version},
	} {
		if _, _, ok := s.Check(tok, a); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if strings.Contains(tok, "17") && strings.Contains(tok, "hash") {
		t.Errorf("the token %q shows the account's credential", tok)
	}
}
