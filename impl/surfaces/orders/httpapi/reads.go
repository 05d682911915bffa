package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/triadhq/triad/impl/surfaces/orders"
)

// validated is the orders surface's router.Surface.Validate: every request goes through the spec
// validator except a read or a move whose every input is already one the spec accepts
// (wellFormedRead, wellFormedMove). Those are the busiest requests (the lists, an order, the
// caller, the moves of an order's life), and for them the validator's
// route matching and parameter decoding cost several times the rest of the shared middleware; the
// generated binders parse the same parameters again and the handlers check what the spec cannot
// state. A read that is not plainly well formed is validated, so every refusal is still the
// validator's, with every problem named (TestWellFormedReads_TheValidatorAccepts ties the two).
func validated(r *http.Request) bool { return !wellFormedRead(r) && !wellFormedMove(r) }

// moves are the actions of PATCH /orders/{id}/{action}: none takes a body, and the id is their
// only path parameter; a move with a query (reject's cancel) goes through the validator.
var moves = map[string]bool{"cancel": true, "release": true, "reject": true, "take": true, "pass": true, "accept": true}

// wellFormedMove reports whether r is PATCH /orders/{id}/{action}, an action of moves, without a
// body or a query, its path sent plainly, the id one wellFormedID takes.
func wellFormedMove(r *http.Request) bool {
	if r.Method != http.MethodPatch || r.ContentLength != 0 || len(r.TransferEncoding) != 0 || r.URL.RawPath != "" || r.URL.RawQuery != "" || r.URL.ForceQuery {
		return false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/orders/")
	if !ok {
		return false
	}
	id, action, ok := strings.Cut(rest, "/")
	return ok && moves[action] && wellFormedID(id)
}

// wellFormedRead reports whether r is GET /authenticated, /orders/{id}, /orders or
// /users/{id}/orders without a body, its path sent plainly (no percent-encoding), with ids of 1 to 19 digits and no leading zero, and as query
// only page, size and sort (the lists), each at most once, page and size decimal integers in the
// spec's bounds and sort one of its values; no other query at all.
func wellFormedRead(r *http.Request) bool {
	if r.Method != http.MethodGet || r.ContentLength != 0 || len(r.TransferEncoding) != 0 || r.URL.RawPath != "" {
		return false
	}
	path, list := r.URL.Path, false
	switch {
	case path == "/authenticated":
	case path == "/orders":
		list = true
	case strings.HasPrefix(path, "/orders/"):
		if !wellFormedID(path[len("/orders/"):]) {
			return false
		}
	case strings.HasPrefix(path, "/users/") && strings.HasSuffix(path, "/orders"):
		if !wellFormedID(path[len("/users/") : len(path)-len("/orders")]) {
			return false
		}
		list = true
	default:
		return false
	}
	if r.URL.RawQuery == "" {
		return true
	}
	return list && wellFormedPage(r.URL.RawQuery)
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
