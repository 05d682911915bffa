package token

import (
	"bytes"
	"encoding/json"
	"math"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// claimsWire is the JSON shape of Claims for decoding. Decoding through it instead of
// jwt.RegisteredClaims avoids the nested json.Unmarshal calls jwt's NumericDate and ClaimStrings
// make for every exp, iat and aud: the token parse is the hot path of every authenticated request.
type claimsWire struct {
	Issuer      string     `json:"iss"`
	Subject     string     `json:"sub"`
	Audience    audWire    `json:"aud"`
	ExpiresAt   *float64   `json:"exp"`
	NotBefore   *float64   `json:"nbf"`
	IssuedAt    *float64   `json:"iat"`
	ID          string     `json:"jti"`
	User        *User      `json:"user"`
	SessionOnly bool       `json:"sess_only"`
	AuthTime    int64      `json:"auth_time"`
	Handshake   *Handshake `json:"handshake"`
	// AuthProvider is decoded into a value: most tokens carry it.
	AuthProvider *AuthProvider `json:"auth_provider"`
}

// claims converts the wire form.
func (w *claimsWire) claims() Claims {
	return Claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: w.Issuer, Subject: w.Subject, Audience: jwt.ClaimStrings(w.Audience),
			ExpiresAt: date(w.ExpiresAt), NotBefore: date(w.NotBefore), IssuedAt: date(w.IssuedAt), ID: w.ID},
		User: w.User, SessionOnly: w.SessionOnly, AuthTime: w.AuthTime, Handshake: w.Handshake, AuthProvider: w.AuthProvider,
	}
}

func date(f *float64) *jwt.NumericDate {
	if f == nil {
		return nil
	}
	sec, frac := math.Modf(*f)
	return jwt.NewNumericDate(time.Unix(int64(sec), int64(frac*1e9)))
}

// audWire decodes aud given as a string or a list of strings.
type audWire []string

// UnmarshalJSON takes the common single-audience list `["x"]` without a nested decode.
func (a *audWire) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*a = nil
		return nil
	case len(b) >= 4 && b[0] == '[' && b[1] == '"' && b[len(b)-2] == '"' && b[len(b)-1] == ']' &&
		bytes.IndexByte(b[2:len(b)-2], '"') < 0 && bytes.IndexByte(b[2:len(b)-2], '\\') < 0:
		*a = audWire{string(b[2 : len(b)-2])}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = audWire{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return jwt.ErrInvalidType
	}
	*a = l
	return nil
}
