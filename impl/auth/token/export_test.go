package token

import "encoding/json"

// DecodeClaims exposes the claims decoder to the tests.
func DecodeClaims(b []byte) (Claims, error) {
	var w claimsWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Claims{}, err
	}
	return w.claims(), nil
}
