package throttle

import "testing"

// Every spelling of an account that logs in as it shares its counter.
func TestLoginKey_FoldsUnicodeSpellings(t *testing.T) {
	want := LoginKey("kate@brands.test", "192.0.2.1:1234")
	for _, account := range []string{" Kate@Brands.Test ", "\u212aate@brands.test", "\uff4b\uff41\uff54\uff45@brands.test",
		"KATE@BRAND\u017f.TEST", "kate@brand\u017f.test"} {
		if got := LoginKey(account, "192.0.2.1:5678"); got != want {
			t.Errorf("LoginKey(%q) = %q, want %q", account, got, want)
		}
	}
	if LoginKey("kata@brands.test", "192.0.2.1:1") == want {
		t.Error("another account shares kate's key")
	}
}
