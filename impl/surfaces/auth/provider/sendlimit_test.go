package provider

import "testing"

// TestRecipientKey_OneMailboxOneKey: every spelling that reaches one mailbox (case, fullwidth
// letters, Gmail's dots and googlemail.com, a +tag, a final dot) is one recipient; other mailboxes
// are not.
func TestRecipientKey_OneMailboxOneKey(t *testing.T) {
	want := RecipientKey("janedoe@gmail.com")
	for _, a := range []string{
		"janedoe@gmail.com", "j.a.n.e.d.o.e@gmail.com", "jane.doe@gmail.com", "janedoe@googlemail.com",
		" JaneDoe@Gmail.COM ", "jane.doe+promo@googlemail.com", "\uff4a\uff41\uff4e\uff45\uff44\uff4f\uff45@gmail.com",
		"janedoe\uff20gmail.com", "janedoe@gmail.com.", "jane.doe\uff0bx@gmail.com",
	} {
		if got := RecipientKey(a); got != want {
			t.Errorf("RecipientKey(%q) = %q, want %q", a, got, want)
		}
	}
	if want != "janedoe@gmail.com" {
		t.Errorf("the key of janedoe@gmail.com is %q", want)
	}
	// Dots count outside Gmail; other names are other mailboxes.
	for _, pair := range [][2]string{{"jane.doe@example.com", "janedoe@example.com"}, {"janedoe@gmail.com", "janedoe2@gmail.com"},
		{"janedoe@gmail.com", "janedoe@gmail.co"}, {"+x@example.com", "@example.com"}} {
		if RecipientKey(pair[0]) == RecipientKey(pair[1]) {
			t.Errorf("%q and %q share a key", pair[0], pair[1])
		}
	}
}
