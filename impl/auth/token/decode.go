package token

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
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

// hs256Header is the header this package writes, base64url-encoded; tokens carrying it skip the
// header decode.
var hs256Header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// verify checks a compact JWS: three base64url segments, header alg exactly HS256 (anything else,
// "none" and every asymmetric or other HMAC algorithm included, is refused before a key is
// chosen) and no crit, then the HMAC (golang-jwt's constant-time HS256 Verify) with the key for the token's
// audience. Claims are returned only once the signature holds.
func verify(tok string, key func(aud string) ([]byte, error)) (Claims, error) {
	i := strings.IndexByte(tok, '.')
	j := strings.LastIndexByte(tok, '.')
	if i <= 0 || j <= i || strings.IndexByte(tok[i+1:j], '.') >= 0 {
		return Claims{}, errors.New("not a compact JWS")
	}
	hdr, payload, sig := tok[:i], tok[i+1:j], tok[j+1:]
	if hdr != hs256Header {
		hb, err := base64.RawURLEncoding.DecodeString(hdr)
		if err != nil {
			return Claims{}, errors.New("bad header encoding")
		}
		var h struct {
			Alg string `json:"alg"`
			// Crit lists extensions the recipient must understand or refuse the token (RFC 7515
			// §4.1.11). This package implements none, so a crit of any value, null and [] included,
			// is refused: accepting it would ignore a rule the issuer declared binding.
			Crit json.RawMessage `json:"crit"`
		}
		if err := json.Unmarshal(hb, &h); err != nil {
			return Claims{}, errors.New("bad header")
		}
		if h.Alg != jwt.SigningMethodHS256.Alg() {
			return Claims{}, fmt.Errorf("algorithm %q refused", h.Alg)
		}
		if h.Crit != nil {
			return Claims{}, errors.New("critical header extensions refused")
		}
	}
	pb, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Claims{}, errors.New("bad payload encoding")
	}
	var w claimsWire
	if err := json.Unmarshal(pb, &w); err != nil {
		return Claims{}, errors.New("bad claims")
	}
	c := w.claims()
	if len(c.Audience) > 1 {
		return Claims{}, errors.New("several audiences")
	}
	k, err := key(c.Aud())
	if err != nil {
		return Claims{}, err
	}
	sb, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Claims{}, errors.New("bad signature encoding")
	}
	if err := jwt.SigningMethodHS256.Verify(tok[:j], sb, k); err != nil {
		return Claims{}, err
	}
	return c, nil
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
