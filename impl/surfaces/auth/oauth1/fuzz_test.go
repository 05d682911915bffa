package oauth1_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/oauth1"
)

// FuzzParseAuthorization: any header parses or is refused without panicking, and what parses
// survives being written back the way the client writes it (RFC 5849 §3.5.1) and parsed again.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{
		`OAuth oauth_consumer_key="key", oauth_nonce="n", oauth_signature="a%2Bb%3D", oauth_version="1.0"`,
		`OAuth realm="Example",oauth_token="t"`, `OAuth `, `OAuth a=`, `OAuth a="%zz"`, `OAuth a="x",a="y"`, `Bearer x`, `OAuth ="",="`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		v, err := oauth1.ParseAuthorization(h)
		if err != nil {
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, oauth1.Escape(k)+`="`+oauth1.Escape(v.Get(k))+`"`)
		}
		again, err := oauth1.ParseAuthorization("OAuth " + strings.Join(parts, ", "))
		if err != nil {
			t.Fatalf("%q parsed to %v, which written back does not parse: %v", h, v, err)
		}
		for _, k := range keys {
			if again.Get(k) != v.Get(k) {
				t.Fatalf("%q: %q is %q, written back and parsed %q", h, k, v.Get(k), again.Get(k))
			}
		}
		if len(again) != len(v) {
			t.Fatalf("%q: %d parameters, written back and parsed %d", h, len(v), len(again))
		}
	})
}
