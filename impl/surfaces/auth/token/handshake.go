package token

import (
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Handshake is the short-lived state of a login in progress.
type Handshake struct {
	// State is the OAuth2 state value the callback must echo.
	State string `json:"state,omitempty"`
	// From is the validated redirect target after login, or "".
	From string `json:"from,omitempty"`
	// Verifier is the PKCE code verifier of the flow.
	Verifier string `json:"verifier,omitempty"`
	// ID identifies a confirmation request (verified provider): user and address.
	ID string `json:"id,omitempty"`
	// Session asks for session-only cookies once the login completes.
	Session bool `json:"session,omitempty"`
	// Provider names the provider that started the handshake; the provider finishing it checks it,
	// so a state or confirmation issued for one provider is never accepted by another.
	Provider string `json:"provider,omitempty"`
}

// HandshakeToken signs a handshake (login in progress or confirmation request) valid for
// HandshakeDuration. It has no user, so it never authenticates a request.
func (s *Service) HandshakeToken(aud string, h Handshake) (string, error) {
	now := s.Now()
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{ID: NewID(), Issuer: s.Issuer, IssuedAt: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.HandshakeDuration))},
		Handshake: &h,
	}
	if aud != "" {
		c.Audience = jwt.ClaimStrings{aud}
	}
	return s.Token(c)
}

// ParseHandshake verifies a handshake token made by HandshakeToken. Expired ones fail.
func (s *Service) ParseHandshake(tok string) (Claims, error) {
	c, err := s.Parse(tok)
	if err != nil {
		return Claims{}, err
	}
	if c.Handshake == nil || c.User != nil {
		return Claims{}, fmt.Errorf("%w: not a handshake", ErrInvalid)
	}
	return c, nil
}

// SetHandshake stores a login in progress in a short-lived HttpOnly cookie bound to its state.
func (s *Service) SetHandshake(w http.ResponseWriter, aud string, h Handshake) error {
	tok, err := s.HandshakeToken(aud, h)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: s.HandshakeCookieName, Value: tok, Path: "/", Domain: s.JWTCookieDomain,
		MaxAge: int(s.HandshakeDuration / time.Second), HttpOnly: true, Secure: s.SecureCookies, SameSite: s.SameSite})
	return nil
}

// GetHandshake reads and verifies the handshake cookie.
func (s *Service) GetHandshake(r *http.Request) (Claims, error) {
	ck, err := r.Cookie(s.HandshakeCookieName)
	if err != nil || ck.Value == "" {
		return Claims{}, ErrNoToken
	}
	return s.ParseHandshake(ck.Value)
}

// ResetHandshake removes the handshake cookie, so a state can be used once.
func (s *Service) ResetHandshake(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.HandshakeCookieName, Value: "", Path: "/", Domain: s.JWTCookieDomain,
		MaxAge: -1, Expires: time.Unix(0, 0), HttpOnly: true, Secure: s.SecureCookies, SameSite: s.SameSite})
}
