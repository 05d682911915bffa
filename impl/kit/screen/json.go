package screen

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// CheckJSON reports the first reason body is not one strict JSON value within l: a syntax error,
// data after the value, a duplicate object key, nesting deeper than MaxDepth, a container with
// more than MaxMembers members, a number literal longer than MaxNumberLen, or a string (value or
// key) that is not valid UTF-8 or holds NUL. It returns nil for an acceptable body.
//
// Why each rule: encoding/json keeps the last of duplicate keys while a validator may check the
// first, so a duplicate would let `{"price":1,"price":999999}` pass as 1 and be stored as 999999;
// trailing data means the client and server disagree on what was sent; a long number literal costs
// the exact-decimal parsers time proportional to its length (a million digits took seconds);
// PostgreSQL refuses NUL and invalid UTF-8 in text with an error that would surface as a 500; deep
// or wide free-form values are stored and served again to every reader.
func (l Limits) CheckJSON(body []byte) *invalid.Detail {
	p, _ := l.checkJSON(body)
	return p
}

// checkJSON is CheckJSON, also returning the first number of an acceptable body beyond float64
// (1e309: too_large, -1e309: too_small, at its path), which the body may hold where its spec
// takes any value (web.WithOverflow says who answers it).
func (l Limits) checkJSON(body []byte) (refused, overflow *invalid.Detail) {
	l = l.orDefaults()
	// JSON text is UTF-8 (RFC 8259 §8.1); checking the whole body once is cheaper than per
	// string; only when it fails are the strings checked one by one, to name the field.
	allValid := utf8.Valid(body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []frame
	var prev int64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return bad(invalid.New(invalid.Body, "body", invalid.Malformed)), nil
			}
			return nil, nil // only an empty body gets here: a complete value returns below
		}
		if err != nil {
			return syntaxProblem(err), nil
		}
		off := dec.InputOffset()
		raw := body[prev:off]
		prev = off
		// Keys come as strings where the innermost frame is an object expecting a key.
		isKey := false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.object && !top.haveKey {
				if _, ok := tok.(json.Delim); !ok {
					isKey = true
				}
			}
		}
		if isKey {
			key := tok.(string)
			top := &stack[len(stack)-1]
			if !allValid && !utf8.Valid(raw) {
				return bad(invalid.New(invalid.Body, containerPath(stack), invalid.Encoding)), nil
			}
			if strings.IndexByte(key, 0) >= 0 {
				return bad(invalid.New(invalid.Body, containerPath(stack), invalid.Encoding)), nil
			}
			if _, dup := top.keys[key]; dup {
				return bad(invalid.New(invalid.Body, pathOf(stack, key), invalid.DuplicateKey)), nil
			}
			if top.keys == nil {
				top.keys = map[string]struct{}{}
			}
			top.keys[key] = struct{}{}
			top.members++
			if top.members > l.MaxMembers {
				return bad(invalid.Bound(invalid.Body, containerPath(stack), invalid.TooMany, invalid.Int(int64(l.MaxMembers)))), nil
			}
			top.key, top.haveKey = key, true
			continue
		}
		// A value (scalar or opening delimiter) or a closing delimiter.
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if valueDone(stack) {
				return trailing(body, off), overflow
			}
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if !top.object {
				top.members++
				if top.members > l.MaxMembers {
					return bad(invalid.Bound(invalid.Body, containerPath(stack), invalid.TooMany, invalid.Int(int64(l.MaxMembers)))), nil
				}
			}
		}
		switch v := tok.(type) {
		case json.Delim: // '{' or '['
			if len(stack) >= l.MaxDepth {
				return bad(invalid.Bound(invalid.Body, pathOf(stack, ""), invalid.TooDeep, invalid.Int(int64(l.MaxDepth)))), nil
			}
			stack = append(stack, frame{object: v == '{'})
			continue
		case json.Number:
			if len(v) > l.MaxNumberLen {
				return bad(invalid.Bound(invalid.Body, pathOf(stack, ""), invalid.TooLong, invalid.Int(int64(l.MaxNumberLen)))), nil
			}
			if overflow == nil {
				if f, err := strconv.ParseFloat(string(v), 64); errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
					code := invalid.TooLarge
					if f < 0 {
						code = invalid.TooSmall
					}
					overflow = bad(invalid.New(invalid.Body, pathOf(stack, ""), code))
				}
			}
		case string:
			if !allValid && !utf8.Valid(raw) {
				return bad(invalid.New(invalid.Body, pathOf(stack, ""), invalid.Encoding)), nil
			}
			if strings.IndexByte(v, 0) >= 0 {
				return bad(invalid.New(invalid.Body, pathOf(stack, ""), invalid.Encoding)), nil
			}
		}
		if valueDone(stack) {
			return trailing(body, off), overflow
		}
	}
}

// trailing refuses anything but whitespace after the top-level value ending at off: the decoder
// would read it as a second value, or report it as a syntax error of the first.
func trailing(body []byte, off int64) *invalid.Detail {
	if len(bytes.TrimLeft(body[off:], " \t\r\n")) > 0 {
		return bad(invalid.New(invalid.Body, "body", invalid.Malformed))
	}
	return nil
}

// frame is one open container while walking the tokens.
type frame struct {
	object  bool
	members int
	key     string // the current member's key (objects)
	haveKey bool   // a key was read and its value is pending
	keys    map[string]struct{}
}

// valueDone marks the innermost object's pending member as complete; it reports whether the value
// was the top-level one.
func valueDone(stack []frame) bool {
	if len(stack) == 0 {
		return true
	}
	if stack[len(stack)-1].object {
		stack[len(stack)-1].haveKey = false
	}
	return false
}

// containerPath names the innermost open container itself.
func containerPath(stack []frame) string { return pathOf(stack[:len(stack)-1], "") }

// pathOf names the position in the style of the spec validator's details: member keys and array
// indexes joined with dots ("products.3.name"), or "body" for the document itself. key, when not
// empty, is appended as a member of the innermost object instead of its pending member.
func pathOf(stack []frame, key string) string {
	var parts []string
	for i, f := range stack {
		last := i == len(stack)-1
		switch {
		case f.object && last && key != "":
			parts = append(parts, key)
		case f.object && f.haveKey:
			parts = append(parts, f.key)
		case !f.object && f.members > 0:
			parts = append(parts, strconv.Itoa(f.members-1))
		}
	}
	if len(parts) == 0 {
		return "body"
	}
	return strings.Join(parts, ".")
}

func syntaxProblem(err error) *invalid.Detail {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return bad(invalid.New(invalid.Body, "body", invalid.Malformed))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return bad(invalid.New(invalid.Body, "body", invalid.Malformed))
	}
	return bad(invalid.New(invalid.Body, "body", invalid.Malformed))
}
