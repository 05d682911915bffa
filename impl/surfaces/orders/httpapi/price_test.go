package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
)

// TestCreateOrder_PriceNumberOrDecimalString: a price is a JSON number (the seed's form) or the
// same decimal as a string (what a JavaScript client can send exactly), with the same bounds, the
// same two-fractional-digit rule and the same 32-character cap; the order answers with a number
// either way. The float trap a JavaScript client falls into (0.1 + 0.2) is refused as a number
// and accepted as the string the client should have built from cents.
func TestCreateOrder_PriceNumberOrDecimalString(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice := e.account("alice", "Customer")
	e.fund(alice, 100_000_000) // room for every accepted price, the largest ones included
	tests := []struct {
		name, price string // the JSON value of "price", as sent
		want        string // the created order's price, or "" for a refusal
		wantMsg     string // the refusal's code (and limit) for the price field
	}{
		{"number", `10.3`, "10.30", ""},
		{"decimal string", `"10.30"`, "10.30", ""},
		{"string without fraction", `"12"`, "12.00", ""},
		{"string with trailing zeros", `"7.500"`, "7.50", ""},
		{"string at the maximum", `"1000000.00"`, "1000000.00", ""},
		{"string at the minimum", `"0.01"`, "0.01", ""},
		{"cents string of 0.1 + 0.2", `"0.30"`, "0.30", ""},
		{"float sum of 0.1 + 0.2", `0.30000000000000004`, "", "precision 2"},
		{"string with three decimals", `"1.005"`, "", "precision 2"},
		{"zero string", `"0.00"`, "", "too_small 0.01"},
		{"string above the maximum", `"1000000.01"`, "", "too_large 1000000"},
		{"negative string", `"-3"`, "", "format"},
		{"string with an exponent", `"1e2"`, "", "format"},
		{"string with a comma", `"10,30"`, "", "format"},
		{"string with leading zeros", `"007"`, "", "format"},
		{"string with spaces", `" 10.30"`, "", "format"},
		{"empty string", `""`, "", "format"},
		{"string over 32 characters", `"1.` + strings.Repeat("0", 31) + `"`, "", "too_long 32"},
		{"neither number nor string", `true`, "", "type"},
		// Beyond float64 (docs/orders.md: refused as out of range, never as the wrong type).
		{"number beyond float64", `1e309`, "", "too_large 1000000"},
		{"negative number beyond float64", `-1e309`, "", "too_small 0.01"},
		{"number at float64's edge", `1e308`, "", "too_large 1000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do("POST", "/orders", alice.token, `{"description":"priced","price":`+tc.price+`}`)
			if tc.want != "" {
				e.want(r, http.StatusCreated)
				var o ordersapi.Order
				r.decode(t, &o)
				if o.Price.String() != tc.want || !strings.Contains(string(r.body), `"price":`+tc.want) {
					t.Fatalf("price %s created %s, want the number %s", tc.price, r.body, tc.want)
				}
				return
			}
			var body ordersapi.Error
			r.decode(t, &body)
			if r.status != http.StatusBadRequest || body.Code != "validation_failed" || body.Details == nil ||
				len(*body.Details) != 1 || (*body.Details)[0].Field != "price" ||
				strings.TrimSpace(fmt.Sprintf("%s %s", (*body.Details)[0].Code, limitOf((*body.Details)[0]))) != tc.wantMsg {
				t.Fatalf("price %s: %d %s, want 400 validation_failed with price: %q", tc.price, r.status, r.body, tc.wantMsg)
			}
		})
	}
}

// TestCreateOrder_EveryProblemAtOnce: one answer names every problem of a new order, whether the
// spec's rules find it (an empty description, an unknown field) or the domain's (a third
// fractional digit, a blank description), each with where, which field, the rule and its limit.
func TestCreateOrder_EveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice := e.account("alice", "Customer")
	tests := []struct {
		body string
		want []string // "in field code [limit]"
	}{
		// The spec refuses description and colour; the domain adds price.
		{`{"description":"","price":"0.001","colour":1}`, []string{
			"body description too_short 1", "body colour unknown_field", "body price precision 2"}},
		// The spec finds nothing; the domain finds both.
		{`{"description":"   ","price":5.001}`, []string{"body description blank", "body price precision 2"}},
		{`{"description":"   ","price":"0.00"}`, []string{"body description blank", "body price too_small 0.01"}},
		// A price of the wrong type is the spec's; the domain does not name it again.
		{`{"description":"   ","price":true}`, []string{"body price type", "body description blank"}},
		{`{"price":"1000000.01"}`, []string{"body description required", "body price too_large 1000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			r := e.do("POST", "/orders", alice.token, tc.body)
			var body ordersapi.Error
			r.decode(t, &body)
			if r.status != http.StatusBadRequest || body.Code != "validation_failed" || body.Details == nil {
				t.Fatalf("%d %s, want 400 validation_failed with details", r.status, r.body)
			}
			var got []string
			for _, d := range *body.Details {
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", d.In, d.Field, d.Code, limitOf(d))))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("details %v, want %v (body %s)", got, want, r.body)
			}
		})
	}
}
