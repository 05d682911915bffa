package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// inOf places a field of the orders domain's refusals: the page parameters are in the query, the
// id in the path, every other field in the body.
func inOf(field string) invalid.In {
	switch field {
	case "page", "size", "sort":
		return invalid.Query
	case "id":
		return invalid.Path
	}
	return invalid.Body
}

// fieldChecks runs the domain's own field checks on a request the spec validator refused, so that
// one answer names every problem: POST /orders {"description":"","price":"0.001","colour":1}
// names description and colour (the spec) and price (the domain's two fractional digits). Only
// fields of the JSON type the spec asks for are checked; the validator has named the others.
func fieldChecks(r *http.Request, body []byte) []web.FieldError {
	if r.Method != http.MethodPost {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	text := func(name string) (string, bool) {
		var s string
		return s, json.Unmarshal(fields[name], &s) == nil
	}
	var err error
	switch r.URL.Path {
	case "/orders":
		var errs []error
		if d, ok := text("description"); ok {
			_, derr := orders.CheckNewOrder(d, "1")
			errs = append(errs, derr)
		}
		if p, ok := priceLiteral(fields["price"]); ok {
			_, perr := orders.CheckPrice(p)
			errs = append(errs, perr)
		}
		err = orders.JoinInvalid(errs...)
	case "/users":
		u, uok := text("username")
		p, pok := text("password")
		t, tok := text("userType")
		var sent invalid.Problems
		for _, d := range invalid.ProblemsOf(orders.CheckNewUser(u, p, orders.UserType(t))) {
			if (d.Field == "username" && uok) || (d.Field == "password" && pok) || (d.Field == "userType" && tok) {
				sent = append(sent, d)
			}
		}
		err = orders.JoinInvalid(sent)
	}
	return fieldOf(err)
}

// priceLiteral is a price as sent: a JSON number's literal or a string's text.
func priceLiteral(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// badParam answers a parameter the generated binder could not read. The binder stops at the first
// such parameter; on the list routes the page parameters are then read again from the raw query,
// so that every problem of the request is answered at once (GET /orders?page=xyz&size=abc names
// both). Only this error path pays for it: a valid request is bound once.
func badParam(w http.ResponseWriter, r *http.Request, err error) {
	first := web.ParamError(r, err)
	if first.Field == "page" || first.Field == "size" {
		// A number the binder could not hold (page=99999999999) breaks the page bounds.
		first = pageBound(first)
	}
	details := []web.FieldError{first}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/orders") {
		// The path's id was bound before the query (a bad one is first); a number out of range
		// is checkID's to name.
		if id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64); err == nil && first.Field != "id" {
			details = append(details, fieldOf(checkID(id))...)
		}
		for _, fe := range pageProblems(r.URL.Query()) {
			if fe.Field != first.Field {
				details = append(details, fe)
			}
		}
	}
	web.WriteError(w, r, http.StatusBadRequest, web.Invalid(details...))
}

// pageBound gives an out-of-range page or size the bound of orders.ParsePage it breaks.
func pageBound(d web.FieldError) web.FieldError {
	if d.Code != invalid.TooLarge && d.Code != invalid.TooSmall {
		return d
	}
	lowest, highest := int64(0), int64(orders.MaxPage)
	if d.Field == "size" {
		lowest, highest = 1, orders.MaxPageSize
	}
	if d.Code == invalid.TooSmall {
		return invalid.Bound(d.In, d.Field, d.Code, invalid.Int(lowest))
	}
	return invalid.Bound(d.In, d.Field, d.Code, invalid.Int(highest))
}

// pageProblems reads page, size and sort from a raw query as the binder and orders.ParsePage do,
// and lists every problem found.
func pageProblems(q url.Values) []web.FieldError {
	var out []web.FieldError
	var page, size *int32
	for _, name := range []string{"page", "size"} {
		vals, ok := q[name]
		if !ok {
			continue
		}
		if len(vals) > 1 {
			out = append(out, invalid.New(invalid.Query, name, invalid.Repeated))
			continue
		}
		n, err := strconv.ParseInt(vals[0], 10, 32)
		if err != nil {
			out = append(out, pageBound(web.ParamDetail(invalid.Query, name, "integer", err)))
			continue
		}
		v := int32(n)
		if name == "page" {
			page = &v
		} else {
			size = &v
		}
	}
	var sort *string
	if vals := q["sort"]; len(vals) > 1 {
		out = append(out, invalid.New(invalid.Query, "sort", invalid.Repeated))
	} else if len(vals) == 1 {
		sort = &vals[0]
	}
	_, err := orders.ParsePage(page, size, sort)
	return append(out, fieldOf(err)...)
}
