package brands

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldProblem names one invalid input field.
type FieldProblem struct {
	Field   string
	Message string
}

// ValidationError lists the invalid fields of one call.
type ValidationError struct {
	Problems []FieldProblem
}

// Unwrap makes every ValidationError an ErrInvalidInput.
func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

// Error lists the problems on one line.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "brands: invalid input: " + strings.Join(parts, "; ")
}

func (e *ValidationError) add(field, msg string) {
	e.Problems = append(e.Problems, FieldProblem{field, msg})
}

func (e *ValidationError) orNil() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e
}

// Bounds of user input, mirrored in api/brands.yaml (bounds_test.go fails when the two differ).
const (
	MaxNameLen      = 100
	MaxEmailLen     = 254
	MinPasswordLen  = 8
	MaxPasswordLen  = 128
	MaxBrandNameLen = 200
	MaxDescription  = 5000
	MaxURLLen       = 2000
)

var idRE = regexp.MustCompile(`^[0-9a-f]{24}$`)

// ValidID reports whether s has the form of a user or brand id.
func ValidID(s string) bool { return idRE.MatchString(s) }

func checkName(v *ValidationError, field, name string, maxLen int) string {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		v.add(field, "must be valid UTF-8")
	case n == 0:
		v.add(field, "must not be empty")
	case n > maxLen:
		v.add(field, fmt.Sprintf("must be at most %d characters", maxLen))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		v.add(field, "must not contain control characters")
	}
	return name
}

func checkEmail(v *ValidationError, email string) string {
	email = strings.TrimSpace(email)
	if len(email) > MaxEmailLen {
		v.add("email", fmt.Sprintf("must be at most %d characters", MaxEmailLen))
		return email
	}
	addr, err := mail.ParseAddress(email)
	// Only a bare address is accepted ("Ada <ada@x>" parses too, but is not an email field value).
	if err != nil || addr.Address != email || addr.Name != "" {
		v.add("email", "must be an email address")
		return email
	}
	if at := strings.LastIndexByte(email, '@'); at < 1 || !strings.Contains(email[at+1:], ".") {
		v.add("email", "must be an email address")
	}
	return email
}

func checkPassword(v *ValidationError, field, pw string) {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen || n > MaxPasswordLen {
		v.add(field, fmt.Sprintf("must be %d to %d characters", MinPasswordLen, MaxPasswordLen))
	}
}

func checkURL(v *ValidationError, field, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if len(s) > MaxURLLen {
		v.add(field, fmt.Sprintf("must be at most %d characters", MaxURLLen))
		return s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(field, "must be an absolute http or https URL")
	}
	return s
}

func checkDescription(v *ValidationError, s string) string {
	if utf8.RuneCountInString(s) > MaxDescription || !utf8.ValidString(s) {
		v.add("description", fmt.Sprintf("must be valid text of at most %d characters", MaxDescription))
	}
	return s
}

func productsJSON(v *ValidationError, ps []Product) []byte {
	if ps == nil {
		ps = []Product{}
	}
	for _, p := range ps {
		if p == nil {
			v.add("products", "every product must be a JSON object")
			return nil
		}
	}
	b, err := json.Marshal(ps)
	if err != nil {
		v.add("products", "must be an array of JSON objects")
	}
	return b
}
