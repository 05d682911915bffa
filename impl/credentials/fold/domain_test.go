package fold

import "testing"

// TestDomain_OneDomainOneForm: the spellings of one domain (Unicode and Punycode, upper case,
// fullwidth letters, the UTS #46 full-stop variants, a final dot) fold to one form; other domains
// stay apart.
func TestDomain_OneDomainOneForm(t *testing.T) {
	for _, tc := range []struct {
		want string
		in   []string
	}{
		{"xn--bcher-kva.example", []string{"bücher.example", "xn--bcher-kva.example", "BÜCHER.EXAMPLE", "XN--BCHER-KVA.example", "bu\u0308cher.example", "bücher\u3002example", "bücher.example."}},
		{"gmail.com", []string{"gmail.com", "gmail\u3002com", "gmail\uff0ecom", "gmail\uff61com", "\uff47\uff4d\uff41\uff49\uff4c\uff0e\uff43\uff4f\uff4d", "GMAIL.COM.", " gmail.com "}},
		{"xn--wgv71a119e.jp", []string{"日本語。jp", "日本語.JP", "xn--wgv71a119e.jp"}},
		{"a_b.example", []string{"a_b.example", "A_B\u3002example"}}, // IDNA refuses "_": folded all the same
	} {
		for _, in := range tc.in {
			if got := Domain(in); got != tc.want {
				t.Errorf("Domain(%q) = %q, want %q", in, got, tc.want)
			}
		}
	}
	for _, pair := range [][2]string{{"bücher.example", "bucher.example"}, {"gmail.com", "gmail.co"}, {"gmail.com", "gmailcom"}} {
		if Domain(pair[0]) == Domain(pair[1]) {
			t.Errorf("%q and %q fold alike", pair[0], pair[1])
		}
	}
}
