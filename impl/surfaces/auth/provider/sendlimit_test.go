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
		"janedoe@gmail\u3002com", "janedoe@gmail\uff0ecom", "janedoe@gmail\uff61com", "j.a.n.e.d.o.e@googlemail\u3002com",
	} {
		if got := RecipientKey(a); got != want {
			t.Errorf("RecipientKey(%q) = %q, want %q", a, got, want)
		}
	}
	// One IDN domain, as Unicode and as Punycode (issue 44: 5 + 5 mails before).
	for _, a := range []string{"jane@bücher.example", "jane@xn--bcher-kva.example", "Jane@BÜCHER.example", "jane@bücher\u3002example"} {
		if got := RecipientKey(a); got != "jane@xn--bcher-kva.example" {
			t.Errorf("RecipientKey(%q) = %q, want jane@xn--bcher-kva.example", a, got)
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
