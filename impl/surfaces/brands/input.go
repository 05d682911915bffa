package brands

import (
	"encoding/json"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// checks collects the problems of one call's input; orNil is its refusal (invalid.Problems, the
// one field-problem error every domain returns; each problem's place, in, is the HTTP edge's to
// fill).
type checks struct {
	Problems invalid.Problems
}

func (e *checks) add(d invalid.Detail) {
	e.Problems = append(e.Problems, d)
}

func (e *checks) orNil() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e.Problems
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

func checkName(v *checks, field, name string, maxLen int) string {
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	switch {
	case !utf8.ValidString(name):
		v.add(invalid.New("", field, invalid.Encoding))
	case n == 0:
		v.add(invalid.New("", field, invalid.Blank))
	case n > maxLen:
		v.add(invalid.Bound("", field, invalid.TooLong, invalid.Int(int64(maxLen))))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		v.add(invalid.New("", field, invalid.ControlCharacter))
	}
	return name
}

func checkEmail(v *checks, email string) string {
	email = strings.TrimSpace(email)
	if len(email) > MaxEmailLen {
		v.add(invalid.Bound("", "email", invalid.TooLong, invalid.Int(MaxEmailLen)))
		return email
	}
	addr, err := mail.ParseAddress(email)
	// Only a bare address is accepted ("Ada <ada@x>" parses too, but is not an email field value).
	if err != nil || addr.Address != email || addr.Name != "" {
		v.add(invalid.Expect("", "email", invalid.Format, "email"))
		return email
	}
	if at := strings.LastIndexByte(email, '@'); at < 1 || !strings.Contains(email[at+1:], ".") {
		v.add(invalid.Expect("", "email", invalid.Format, "email"))
	}
	return email
}

func checkPassword(v *checks, field, pw string) {
	switch n := utf8.RuneCountInString(pw); {
	case n < MinPasswordLen:
		v.add(invalid.Bound("", field, invalid.TooShort, invalid.Int(MinPasswordLen)))
	case n > MaxPasswordLen:
		v.add(invalid.Bound("", field, invalid.TooLong, invalid.Int(MaxPasswordLen)))
	}
}

func checkURL(v *checks, field, s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if len(s) > MaxURLLen {
		v.add(invalid.Bound("", field, invalid.TooLong, invalid.Int(MaxURLLen)))
		return s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(invalid.Expect("", field, invalid.Format, "uri"))
	}
	return s
}

func checkDescription(v *checks, s string) string {
	switch {
	case !utf8.ValidString(s):
		v.add(invalid.New("", "description", invalid.Encoding))
	case utf8.RuneCountInString(s) > MaxDescription:
		v.add(invalid.Bound("", "description", invalid.TooLong, invalid.Int(MaxDescription)))
	}
	return s
}

func productsJSON(v *checks, ps []Product) []byte {
	if ps == nil {
		ps = []Product{}
	}
	for _, p := range ps {
		if p == nil {
			v.add(invalid.Expect("", "products", invalid.Type, "array"))
			return nil
		}
	}
	b, err := json.Marshal(ps)
	if err != nil {
		v.add(invalid.Expect("", "products", invalid.Type, "array"))
	}
	return b
}

// CheckField runs the domain's own rule for one text field of a body, as the operations that take
// it check it (brand: the body is a brand's, whose name may be longer than a user's), and lists its
// problems. The HTTP edge runs it on a request the spec refused, so one answer names the spec's
// problems and the domain's (a control character in a name) at once.
func CheckField(field, value string, brand bool) []invalid.Detail {
	var v checks
	switch field {
	case "name":
		if brand {
			checkName(&v, field, value, MaxBrandNameLen)
		} else {
			checkName(&v, field, value, MaxNameLen)
		}
	case "email":
		checkEmail(&v, value)
	case "password", "newPassword":
		checkPassword(&v, field, value)
	case "url", "featuredImage":
		checkURL(&v, field, value)
	case "description":
		checkDescription(&v, value)
	}
	return v.Problems
}
