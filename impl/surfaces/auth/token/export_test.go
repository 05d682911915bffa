package token

import "encoding/json"

// DecodeClaims exposes the encoding/json claims decoder (the fallback of the fast one) to the tests.
func DecodeClaims(b []byte) (Claims, error) {
	var w claimsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Claims{}, err
	}
	return w.claims(), nil
}

// FastClaims exposes the fast claims decoder to the tests.
var FastClaims = fastClaims

// CookieValue exposes the cookie scan to the tests.
var CookieValue = cookieValue
