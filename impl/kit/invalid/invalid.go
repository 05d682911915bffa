// Package invalid is the one vocabulary of request problems: where the value was (in), which
// value (field), what rule it broke (code), the rule's bound where it has one (limit), and one
// human message per code. Every layer that refuses input speaks it: the spec validator and the
// generated parameter binders (impl/kit/web), the input screen (impl/kit/screen), and the domains' own
// field checks (impl/surfaces/orders, impl/surfaces/brands), which import it without importing net/http. A UI
// switches on Code and shows Message (or its own words) beside Field.
package invalid

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// In says where a value was sent: the OpenAPI parameter locations, and body for the fields of a
// JSON or form body.
type In string

// The places a value is sent.
const (
	Body   In = "body"
	Query  In = "query"
	Path   In = "path"
	Header In = "header"
	Cookie In = "cookie"
)

// Code is the rule a value broke. Codes lists them all; the specs' ApiError schema documents the
// same list (TestCodes_InEverySpec ties the two).
type Code string

// The codes. Each has one message (Message): the same words whichever layer refuses.
const (
	// Required: a required field or parameter is missing.
	Required Code = "required"
	// UnknownField: a body property the operation does not take.
	UnknownField Code = "unknown_field"
	// Type: a value of the wrong JSON type, or a parameter that cannot be read as its type;
	// Expected names the type(s) taken.
	Type Code = "type"
	// TooShort: text shorter than Limit characters.
	TooShort Code = "too_short"
	// TooLong: text (or a number literal) longer than Limit characters.
	TooLong Code = "too_long"
	// TooSmall: a number below Limit.
	TooSmall Code = "too_small"
	// TooLarge: a number above Limit (Limit is absent when the number overflows its type).
	TooLarge Code = "too_large"
	// TooFew: an array or object with fewer than Limit items.
	TooFew Code = "too_few"
	// TooMany: an array or object with more than Limit items.
	TooMany Code = "too_many"
	// TooDeep: a JSON value nested deeper than Limit levels.
	TooDeep Code = "too_deep"
	// Precision: a decimal with more than Limit fractional digits.
	Precision Code = "precision"
	// Pattern: text that does not match the regular expression in Expected.
	Pattern Code = "pattern"
	// Format: text that is not of the format in Expected (email, decimal, uri, date-time, ...).
	Format Code = "format"
	// Enum: a value that is not one of Allowed.
	Enum Code = "enum"
	// Blank: text of spaces only where some text is needed.
	Blank Code = "blank"
	// ControlCharacter: text holding control characters where plain text is needed.
	ControlCharacter Code = "control_character"
	// Encoding: text that is not valid UTF-8 (or percent-encoding), or that holds NUL.
	Encoding Code = "encoding"
	// Repeated: a parameter or form field given more than once where it takes one value.
	Repeated Code = "repeated"
	// DuplicateKey: a JSON object key that appears twice.
	DuplicateKey Code = "duplicate_key"
	// AtLeastOne: none of the fields in Allowed was given where at least one is needed.
	AtLeastOne Code = "at_least_one"
	// Malformed: a body that cannot be read as its Content-Type says (JSON cut short, data after
	// the value).
	Malformed Code = "malformed"
	// Invalid: a value refused by a rule none of the other codes names.
	Invalid Code = "invalid"
)

// Codes lists every code, in the order the specs document them.
var Codes = []Code{Required, UnknownField, Type, TooShort, TooLong, TooSmall, TooLarge, TooFew, TooMany,
	TooDeep, Precision, Pattern, Format, Enum, Blank, ControlCharacter, Encoding, Repeated, DuplicateKey,
	AtLeastOne, Malformed, Invalid}

// Detail is one problem of a request: an entry of the ApiError body's details.
type Detail struct {
	// In is where the value was sent; the domains leave it empty and the surface's edge fills it.
	In In `json:"in"`
	// Field is the parameter's name, or the path of the body property (products.0.price);
	// "body" for a body that could not be read at all.
	Field string `json:"field"`
	// Code is the rule broken.
	Code Code `json:"code"`
	// Limit is the bound of a too_*, precision or too_deep rule.
	Limit json.Number `json:"limit,omitempty"`
	// Expected is the type (type), regular expression (pattern) or format (format) taken.
	Expected string `json:"expected,omitempty"`
	// Allowed lists the values an enum takes.
	Allowed []string `json:"allowed,omitempty"`
	// Message is the code's one message, filled by the constructors below.
	Message string `json:"message"`
}

// New is a problem of a code without a parameter (required, unknown_field, blank, ...).
func New(in In, field string, code Code) Detail {
	return Detail{In: in, Field: field, Code: code, Message: Message(code, "", "", nil)}
}

// Bound is a problem of a too_*, precision or too_deep rule with its limit.
func Bound(in In, field string, code Code, limit json.Number) Detail {
	return Detail{In: in, Field: field, Code: code, Limit: limit, Message: Message(code, limit, "", nil)}
}

// Int is an integer limit.
func Int(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// Expect is a problem of a type, pattern or format rule with what it takes.
func Expect(in In, field string, code Code, expected string) Detail {
	return Detail{In: in, Field: field, Code: code, Expected: expected, Message: Message(code, "", expected, nil)}
}

// OneOf is an enum problem with the values allowed.
func OneOf(in In, field string, allowed []string) Detail {
	return Detail{In: in, Field: field, Code: Enum, Allowed: allowed, Message: Message(Enum, "", "", allowed)}
}

// Some is an at_least_one problem naming the fields of which one is needed.
func Some(in In, field string, fields []string) Detail {
	return Detail{In: in, Field: field, Code: AtLeastOne, Allowed: fields, Message: Message(AtLeastOne, "", "", fields)}
}

// At returns d placed in in when it has no place yet (a domain's detail, placed by the edge).
func (d Detail) At(in In) Detail {
	if d.In == "" {
		d.In = in
	}
	return d
}

// formatWords are the messages of the formats the specs use, after "must be ".
var formatWords = map[string]string{
	"email":     "an email address",
	"decimal":   "a decimal in plain notation, e.g. 120.50",
	"uri":       "an absolute http or https URL",
	"date-time": "a date and time (RFC 3339)",
	"int32":     "an integer",
	"int64":     "an integer",
}

// typeWords are the JSON types, after "must be ".
var typeWords = map[string]string{
	"string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false",
	"array": "an array", "object": "an object",
}

// Message is the one message of a code, given the detail's limit, expected type, format or pattern,
// and allowed values.
func Message(code Code, limit json.Number, expected string, allowed []string) string {
	switch code {
	case Required:
		return "is required"
	case UnknownField:
		return "is not a field of this request"
	case Type:
		var words []string
		for _, t := range strings.Split(expected, "|") {
			if w, ok := typeWords[t]; ok {
				words = append(words, w)
			}
		}
		if len(words) == 0 {
			return "is of the wrong type"
		}
		return "must be " + strings.Join(words, " or ")
	case TooShort:
		return "must be at least " + count(limit, "character")
	case TooLong:
		return "must be at most " + count(limit, "character")
	case TooSmall:
		if limit == "" {
			return "number is out of range"
		}
		return "must be at least " + string(limit)
	case TooLarge:
		if limit == "" {
			return "number is out of range"
		}
		return "must be at most " + string(limit)
	case TooFew:
		return "must have at least " + count(limit, "item")
	case TooMany:
		return "must have at most " + count(limit, "item")
	case TooDeep:
		return "must nest at most " + count(limit, "level")
	case Precision:
		return "must have at most " + count(limit, "fractional digit")
	case Pattern:
		return "must match the pattern " + expected
	case Format:
		if w, ok := formatWords[expected]; ok {
			return "must be " + w
		}
		return "must be of the format " + expected
	case Enum:
		return "must be one of: " + strings.Join(allowed, ", ")
	case Blank:
		return "must not be blank"
	case ControlCharacter:
		return "must not contain control characters"
	case Encoding:
		return "must be valid UTF-8 without NUL characters"
	case Repeated:
		return "must be given once"
	case DuplicateKey:
		return "must appear once in its object"
	case AtLeastOne:
		return "must hold at least one of: " + strings.Join(allowed, ", ")
	case Malformed:
		return "could not be decoded"
	}
	return "is not valid"
}

// count is "1 character" or "8 characters".
func count(n json.Number, noun string) string {
	if n == "1" {
		return "1 " + noun
	}
	return string(n) + " " + noun + "s"
}

// ErrInput is what every refusal of input matches (errors.Is): a surface's refusal table maps it
// to 400 validation_failed with the Problems as the details (refusal.InvalidInput).
var ErrInput = errors.New("invalid input")

// Problems is a domain's refusal of input: every problem it found, in the shared vocabulary, with
// no place (In) yet; the surface's edge places each (Detail.At). It is the one field-problem error
// of the domains and imports no net/http.
type Problems []Detail

// Error reads one detail as a sentence, the field and then what is wrong with it (an OAuth
// error_description, a log line).
func (d Detail) Error() string { return d.Field + " " + d.Message }

// Error lists the problems on one line.
func (p Problems) Error() string {
	parts := make([]string, len(p))
	for i, d := range p {
		parts[i] = d.Field + ": " + d.Message
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Is makes every Problems match ErrInput.
func (p Problems) Is(target error) bool { return target == ErrInput }

// ProblemsOf returns the problems err carries (errors.As), or nil.
func ProblemsOf(err error) Problems {
	var p Problems
	if errors.As(err, &p) {
		return p
	}
	return nil
}
