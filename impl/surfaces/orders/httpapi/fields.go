package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/page"
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
// names description and colour (the spec) and price (the domain's two fractional digits), and
// GET /orders?page=600&sort=name names sort (the spec) and page (too deep for the size, which
// the spec cannot state). Only fields of the type the spec asks for are checked; the validator
// has named the others.
var fieldChecks = web.FieldChecks{
	"CreateOrder":        bodyChecks(checkNewOrder),
	"RegisterOrdersUser": bodyChecks(checkNewUser),
	"ListNewOrders":      queryChecks,
	"ListUserOrders":     queryChecks,
}

// bodyChecks runs check on the fields of a JSON object body.
func bodyChecks(check func(fields map[string]json.RawMessage) error) web.FieldCheck {
	return func(_ *http.Request, body []byte) []web.FieldError {
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) != nil {
			return nil
		}
		return fieldOf(check(fields))
	}
}

// text is a body field sent as a JSON string.
func text(fields map[string]json.RawMessage, name string) (string, bool) {
	var s string
	return s, json.Unmarshal(fields[name], &s) == nil
}

// checkNewOrder is the domain's checks of POST /orders's description and price.
func checkNewOrder(fields map[string]json.RawMessage) error {
	var errs []error
	if d, ok := text(fields, "description"); ok {
		_, derr := orders.CheckNewOrder(d, "1")
		errs = append(errs, derr)
	}
	if p, ok := priceLiteral(fields["price"]); ok {
		_, perr := orders.CheckPrice(p)
		errs = append(errs, perr)
	}
	return orders.JoinInvalid(errs...)
}

// checkNewUser is the domain's checks of POST /users's fields, those sent as strings.
func checkNewUser(fields map[string]json.RawMessage) error {
	u, uok := text(fields, "username")
	p, pok := text(fields, "password")
	t, tok := text(fields, "userType")
	var sent invalid.Problems
	for _, d := range invalid.ProblemsOf(orders.CheckNewUser(u, p, orders.UserType(t))) {
		if (d.Field == "username" && uok) || (d.Field == "password" && pok) || (d.Field == "userType" && tok) {
			sent = append(sent, d)
		}
	}
	return orders.JoinInvalid(sent)
}

// queryChecks is pageChecks of a list request's query.
func queryChecks(r *http.Request, _ []byte) []web.FieldError { return pageChecks(r.URL.Query()) }

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

// pageChecks names, on a list request the validator refused for another reason, what the spec
// cannot state about its page parameters: the shared pagination's (page.Problems: a parameter sent
// twice, sort included, and the bound page × size ≤ page.MaxOffset).
func pageChecks(q url.Values) []web.FieldError { return page.Problems(q, "sort") }
