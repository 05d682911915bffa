package screen

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// bad is the refusal of one input, placed, named and coded as the spec validator does: Field is a
// parameter name, or a body property's path with members joined by dots ("products.0.name");
// "body" is the body itself. The screen returns invalid.Detail itself, the one field-problem type.
func bad(d invalid.Detail) *invalid.Detail { return &d }

// CheckText refuses s, the value of field, when it is not valid UTF-8 or holds NUL: PostgreSQL
// stores neither in text and would answer with an error, and no user types them.
func CheckText(in invalid.In, field, s string) *invalid.Detail {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return bad(invalid.New(in, field, invalid.Encoding))
	}
	return nil
}

// CheckValues checks an application/x-www-form-urlencoded string (a query string or a form body):
// each name and value must be valid percent-encoding of valid UTF-8 without NUL, and the value of
// every name numeric reports must be a short number literal. numeric may be nil.
func (l Limits) CheckValues(in invalid.In, raw string, numeric func(name string) bool) *invalid.Detail {
	l = l.orDefaults()
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := unescape(rawName)
		if err != nil {
			return bad(invalid.New(in, safeName(rawName), invalid.Encoding))
		}
		if !utf8.ValidString(name) {
			return bad(invalid.New(in, "parameter", invalid.Encoding))
		}
		if strings.IndexByte(name, 0) >= 0 {
			return bad(invalid.New(in, "parameter", invalid.Encoding))
		}
		value, err := unescape(rawValue)
		if err != nil {
			return bad(invalid.New(in, name, invalid.Encoding))
		}
		if p := CheckText(in, name, value); p != nil {
			return p
		}
		if numeric != nil && len(value) > l.MaxNumberLen && numeric(name) {
			return bad(invalid.Bound(in, name, invalid.TooLong, invalid.Int(int64(l.MaxNumberLen))))
		}
	}
	return nil
}

// unescape decodes one query component without allocating when there is nothing to decode.
func unescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, nil
	}
	return url.QueryUnescape(s)
}

// safeName is a parameter name fit to echo in a refusal: names that are not valid UTF-8 or hold
// control characters are replaced by a neutral word.
func safeName(s string) string {
	if CheckText("", "", s) != nil || len(s) > 64 {
		return "parameter"
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return "parameter"
		}
	}
	return s
}
