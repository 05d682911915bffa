package screen

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Problem is one refused input: the field it is in and what is wrong with it.
type Problem struct {
	// Field names the input as the spec validator does: a parameter name, or a body property's
	// path with members joined by dots ("products.0.name"); "body" is the body itself.
	Field string
	// Message completes a sentence that starts with the field, e.g. "must be valid UTF-8".
	Message string
}

// Error reads as one sentence: the field, then what is wrong with it.
func (p *Problem) Error() string { return p.Field + " " + p.Message }

const (
	msgNotUTF8 = "must be valid UTF-8"
	msgNUL     = "must not contain a NUL character"
)

// CheckText refuses s, the value of field, when it is not valid UTF-8 or holds NUL: PostgreSQL
// stores neither in text and would answer with an error, and no user types them.
func CheckText(field, s string) *Problem {
	if !utf8.ValidString(s) {
		return &Problem{Field: field, Message: msgNotUTF8}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return &Problem{Field: field, Message: msgNUL}
	}
	return nil
}

// CheckValues checks an application/x-www-form-urlencoded string (a query string or a form body):
// each name and value must be valid percent-encoding of valid UTF-8 without NUL, and the value of
// every name numeric reports must be a short number literal. numeric may be nil.
func (l Limits) CheckValues(raw string, numeric func(name string) bool) *Problem {
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
			return &Problem{Field: safeName(rawName), Message: "has a name that is not valid percent-encoding"}
		}
		if !utf8.ValidString(name) {
			return &Problem{Field: "parameter", Message: "has a name that is not valid UTF-8"}
		}
		if strings.IndexByte(name, 0) >= 0 {
			return &Problem{Field: "parameter", Message: "has a name that contains a NUL character"}
		}
		value, err := unescape(rawValue)
		if err != nil {
			return &Problem{Field: name, Message: "must be valid percent-encoding"}
		}
		if p := CheckText(name, value); p != nil {
			return p
		}
		if numeric != nil && len(value) > l.MaxNumberLen && numeric(name) {
			return &Problem{Field: name, Message: fmt.Sprintf("is a number literal longer than %d characters", l.MaxNumberLen)}
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
	if CheckText("", s) != nil || len(s) > 64 {
		return "parameter"
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return "parameter"
		}
	}
	return s
}
