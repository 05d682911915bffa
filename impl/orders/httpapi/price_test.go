package httpapi_test

import (
	"net/http"
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
	tests := []struct {
		name, price string // the JSON value of "price", as sent
		want        string // the created order's price, or "" for a refusal
		wantMsg     string // the refusal's message for the price field
	}{
		{"number", `10.3`, "10.30", ""},
		{"decimal string", `"10.30"`, "10.30", ""},
		{"string without fraction", `"12"`, "12.00", ""},
		{"string with trailing zeros", `"7.500"`, "7.50", ""},
		{"string at the maximum", `"1000000.00"`, "1000000.00", ""},
		{"string at the minimum", `"0.01"`, "0.01", ""},
		{"cents string of 0.1 + 0.2", `"0.30"`, "0.30", ""},
		{"float sum of 0.1 + 0.2", `0.30000000000000004`, "", "price must have at most two fractional digits"},
		{"string with three decimals", `"1.005"`, "", "price must have at most two fractional digits"},
		{"zero string", `"0.00"`, "", "price must be between 0.01 and 1000000.00"},
		{"string above the maximum", `"1000000.01"`, "", "price must be between 0.01 and 1000000.00"},
		{"negative string", `"-3"`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"string with an exponent", `"1e2"`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"string with a comma", `"10,30"`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"string with leading zeros", `"007"`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"string with spaces", `" 10.30"`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"empty string", `""`, "", "must be a decimal in plain notation, e.g. 120.50"},
		{"string over 32 characters", `"1.` + strings.Repeat("0", 31) + `"`, "", "maximum string length is 32"},
		{"neither number nor string", `true`, "", "must be a number or a decimal string"},
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
				len(*body.Details) != 1 || (*body.Details)[0].Field != "price" || (*body.Details)[0].Message != tc.wantMsg {
				t.Fatalf("price %s: %d %s, want 400 validation_failed with price: %q", tc.price, r.status, r.body, tc.wantMsg)
			}
		})
	}
}
