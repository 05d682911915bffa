package screen

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// FuzzCheckJSON: the checker never panics, and whatever it accepts (with at most 4 levels and 8
// members) is exactly one JSON value, nothing after it, that encoding/json decodes; its text is
// valid UTF-8, no string or key holds NUL, no number literal is longer than 32 characters, no
// object has a key twice (compared after unescaping, as a decoder sees them), and no object or
// array nests deeper than 4 levels or has more than 8 members. The oracle walks the value's
// tokens recursively, apart from the checker's own loop.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"price":1,"price":2}`, `{"a":1,"\u0061":2}`, `[{"a":[1,{"b":"\u0000"}]}]`,
		`{"a":1}x`, `{"a":1} {}`, "\"\xff\"", `1e400`, `{"a":"\ud800"}`, `[1,2,3,4,5,6,7,8,9]`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`, `[[[[[1]]]]]`, `{"a":{"b":{"c":{"d":{}}}}}`,
		`0.` + strings.Repeat("1", 40), `-` + strings.Repeat("9", 31), `[` + strings.Repeat("1", 33) + `]`} {
		f.Add([]byte(s))
	}
	const maxDepth, maxMembers = 4, 8
	f.Fuzz(func(t *testing.T, body []byte) {
		l := Limits{MaxDepth: maxDepth, MaxMembers: maxMembers}
		p := l.CheckJSON(body)
		if p != nil || len(bytes.TrimSpace(body)) == 0 { // no value at all is the validators' to refuse
			return
		}
		if !json.Valid(body) { // one value and only white space around it
			t.Fatalf("accepted %q, which is not exactly one JSON value", body)
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted %q, which is not UTF-8", body)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber() // the checker bounds literals; their range is the validators' to judge
		next := func() json.Token {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("accepted %q, which does not decode: %v", body, err)
			}
			return tok
		}
		// value reads the value that starts with tok; depth counts containers, the document's own
		// included.
		var value func(tok json.Token, depth int)
		value = func(tok json.Token, depth int) {
			switch tok := tok.(type) {
			case string:
				if strings.IndexByte(tok, 0) >= 0 {
					t.Fatalf("accepted %q with a NUL", body)
				}
			case json.Number:
				if len(tok) > DefaultMaxNumberLen {
					t.Fatalf("accepted %q with the %d-character number %s", body, len(tok), tok)
				}
			case json.Delim:
				if depth > maxDepth {
					t.Fatalf("accepted %q nesting deeper than %d", body, maxDepth)
				}
				keys := map[string]bool{}
				for members := 1; dec.More(); members++ {
					if members > maxMembers {
						t.Fatalf("accepted %q with a container of more than %d members", body, maxMembers)
					}
					if tok == '{' {
						key, _ := next().(string)
						if strings.IndexByte(key, 0) >= 0 {
							t.Fatalf("accepted %q with a NUL key", body)
						}
						if keys[key] {
							t.Fatalf("accepted %q with the key %q twice", body, key)
						}
						keys[key] = true
					}
					value(next(), depth+1)
				}
				next() // the closing delimiter
			}
		}
		value(next(), 1)
		if tok, err := dec.Token(); err != io.EOF {
			t.Fatalf("accepted %q with %v (%v) after its value", body, tok, err)
		}
	})
}

// FuzzCheckValues: the checker never panics, and whatever it accepts parses as a query whose names
// and values are valid UTF-8 without NUL.
func FuzzCheckValues(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "email=a%00b", "x=%FF", "p=%zz", "a+b=c+d&&", "page=" + strings.Repeat("9", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if (Limits{}).CheckValues(invalid.Query, raw, func(string) bool { return true }) != nil {
			return
		}
		vals, _ := url.ParseQuery(raw) // semicolons are its own refusal; the pairs it keeps are checked
		for k, vs := range vals {
			for _, v := range append(vs, k) {
				if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
					t.Fatalf("accepted %q holding %q", raw, v)
				}
				if v != k && len(v) > DefaultMaxNumberLen {
					t.Fatalf("accepted %q with the numeric value %q", raw, v)
				}
			}
		}
	})
}
