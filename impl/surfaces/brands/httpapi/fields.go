package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// inOf places a field of the brands domain's refusals: ids are path segments, every other field is
// in the body (JSON or form).
func inOf(field string) invalid.In {
	if field == "id" {
		return invalid.Path
	}
	return invalid.Body
}

// fieldChecks runs the domain's field rules (brands.CheckField) on the text fields of a JSON or
// form body the spec validator refused, so that one answer lists every problem: a register with a
// bad email (the spec) and a control character in the name (the domain) names both. Empty values
// are left to the spec, which says where a field is required (an edit leaves empty fields as they
// are).
var fieldChecks = web.FieldChecks{
	"RegisterBrandsUser": textChecks(false),
	"LoginUser":          textChecks(false),
	"ResetPassword":      textChecks(false),
	"EditProfile":        textChecks(false),
	"CreateBrand":        textChecks(true),
	"UpdateBrand":        textChecks(true),
}

// textChecks checks the text fields of a body, a brand's (brand) or a user's.
func textChecks(brand bool) web.FieldCheck {
	return func(r *http.Request, body []byte) []web.FieldError { return checkText(r, body, brand) }
}

// checkText is textChecks' work on one request.
func checkText(r *http.Request, body []byte, brand bool) []web.FieldError {
	fields := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil
		}
		for k, v := range form {
			if len(v) == 1 {
				fields[k] = v[0]
			}
		}
	} else {
		var raw map[string]json.RawMessage
		if json.Unmarshal(body, &raw) != nil {
			return nil
		}
		for k, v := range raw {
			var s string
			if json.Unmarshal(v, &s) == nil {
				fields[k] = s
			}
		}
	}
	var out []web.FieldError
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if fields[name] == "" {
			continue
		}
		for _, p := range brands.CheckField(name, fields[name], brand) {
			out = append(out, p.At(invalid.Body))
		}
	}
	return out
}
