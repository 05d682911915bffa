package screen

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSON: the checker never panics, and whatever it accepts is one JSON value that
// encoding/json decodes, whose strings are valid UTF-8 without NUL and whose numbers are short.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"price":1,"price":2}`, `[{"a":[1,{"b":"\u0000"}]}]`, `{"a":1}x`, "\"\xff\"", `1e400`, `{"a":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l := Limits{MaxDepth: 4, MaxMembers: 8}
		p := l.CheckJSON(body)
		if p != nil || len(bytes.TrimSpace(body)) == 0 { // no value at all is the validators' to refuse
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber() // the checker bounds literals; their range is the validators' to judge
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted %q, which does not decode: %v", body, err)
		}
		var walk func(v any, depth int)
		walk = func(v any, depth int) { // depth counts containers, the document's own included
			switch v.(type) {
			case []any, map[string]any:
				if depth > 4 {
					t.Fatalf("accepted %q nesting deeper than 4", body)
				}
			}
			switch v := v.(type) {
			case string:
				if strings.IndexByte(v, 0) >= 0 {
					t.Fatalf("accepted %q with a NUL", body)
				}
			case []any:
				if len(v) > 8 {
					t.Fatalf("accepted %q with %d members", body, len(v))
				}
				for _, e := range v {
					walk(e, depth+1)
				}
			case map[string]any:
				for k, e := range v {
					if strings.IndexByte(k, 0) >= 0 {
						t.Fatalf("accepted %q with a NUL key", body)
					}
					walk(e, depth+1)
				}
			}
		}
		walk(v, 1)
		if !utf8.Valid(body) {
			t.Fatalf("accepted %q, which is not UTF-8", body)
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
		if (Limits{}).CheckValues(raw, func(string) bool { return true }) != nil {
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
