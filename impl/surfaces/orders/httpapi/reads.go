package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// unvalidated is the orders surface's Unvalidated (router.Surface.Unvalidated): the operations
// served past the spec validator when every input is plainly one the spec takes, by operation id,
// each with that test. They are the busiest requests (the lists, an order, the caller, the moves
// of an order's life), and for them the validator's route matching and parameter decoding cost
// several times the rest of the shared middleware; the generated binders parse the same
// parameters again and the handlers check what the spec cannot state. A request that is not
// plainly well formed is validated, so every refusal is still the validator's, with every problem
// named (TestUnvalidated_TheValidatorAccepts ties each test to the validator).
var unvalidated = map[string]func(*http.Request) bool{
	"GetAuthenticatedUser": func(r *http.Request) bool { return plain(r) && r.URL.RawQuery == "" },
	"GetOrder":             func(r *http.Request) bool { return plain(r) && r.URL.RawQuery == "" && wellFormedID(idIn(r)) },
	"ListNewOrders":        func(r *http.Request) bool { return plain(r) && wellFormedPage(r.URL.RawQuery) },
	"ListUserOrders":       func(r *http.Request) bool { return plain(r) && wellFormedID(idIn(r)) && wellFormedPage(r.URL.RawQuery) },
	"CancelOrder":          wellFormedMove,
	"ReleaseOrder":         wellFormedMove,
	"RejectOrder":          wellFormedMove,
	"TakeOrder":            wellFormedMove,
	"PassOrder":            wellFormedMove,
	"AcceptOrder":          wellFormedMove,
}

// plain reports whether r has no body and its path was sent plainly (no percent-encoding).
func plain(r *http.Request) bool {
	return r.ContentLength == 0 && len(r.TransferEncoding) == 0 && r.URL.RawPath == ""
}

// wellFormedMove reports whether r, a move (PATCH /orders/{id}/{action}: none takes a body, the
// id is its only required parameter), is plain, without a query or an Idempotency-Key (the
// validator checks a key's form), its id one wellFormedID takes.
func wellFormedMove(r *http.Request) bool {
	return plain(r) && r.URL.RawQuery == "" && !r.URL.ForceQuery && len(r.Header.Values(idempotency.Header)) == 0 &&
		wellFormedID(idIn(r))
}

// idIn is the id of /orders/{id}..., /users/{id}/orders: the path's second segment.
func idIn(r *http.Request) string {
	_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// wellFormedID reports whether s is an id the spec takes: a decimal int64 of at least 1, written
// plainly (no sign, no leading zero).
func wellFormedID(s string) bool {
	if s == "" || s[0] == '0' || !digits(s) {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// wellFormedPage reports whether the query q holds only page, size and sort, each at most once and
// within the spec's bounds (orders.ParsePage's, tied to the spec by bounds_test.go).
func wellFormedPage(q string) bool {
	var seen [3]bool
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		name, value, ok := strings.Cut(pair, "=")
		if !ok {
			return false
		}
		i, ok := 0, true
		switch name {
		case "page":
			ok = bounded(value, 0, orders.MaxPage)
		case "size":
			i, ok = 1, bounded(value, 1, orders.MaxPageSize)
		case "sort":
			i, ok = 2, wellFormedSort(value)
		default:
			return false
		}
		if !ok || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// bounded reports whether s is a plainly written decimal integer in [lowest, highest].
func bounded(s string, lowest, highest int) bool {
	if s == "" || len(s) > 6 || (len(s) > 1 && s[0] == '0') || !digits(s) {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= lowest && n <= highest
}

// wellFormedSort reports whether s, as sent (a comma may come percent-encoded), is a sort the
// lists take.
func wellFormedSort(s string) bool {
	if strings.Contains(s, "%") {
		u, err := url.QueryUnescape(s)
		if err != nil {
			return false
		}
		s = u
	}
	_, err := orders.ParsePage(nil, nil, &s)
	return err == nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
