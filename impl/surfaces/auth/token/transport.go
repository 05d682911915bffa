package token

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Set completes claims (jti when empty, iss, iat, exp, auth_time when zero), runs the ClaimsUpdater,
// signs them and sets the JWT and XSRF cookies. It returns the claims as signed.
func (s *Service) Set(w http.ResponseWriter, c Claims) (Claims, error) {
	c, _, err := s.SetToken(w, c)
	return c, err
}

// SetToken is Set that also returns the token it set, so a caller that needs both (the
// middleware's refresh hands the token to the Validator) signs once.
func (s *Service) SetToken(w http.ResponseWriter, c Claims) (Claims, string, error) {
	now := s.Now()
	if c.ID == "" {
		c.ID = NewID()
	}
	if s.Issuer != "" {
		c.Issuer = s.Issuer
	}
	c.IssuedAt = jwt.NewNumericDate(now)
	c.ExpiresAt = jwt.NewNumericDate(now.Add(s.TokenDuration))
	if c.AuthTime == 0 {
		c.AuthTime = now.Unix()
	}
	if c.User != nil && c.User.Audience == "" {
		c.User.Audience = c.Aud()
	}
	if s.ClaimsUpd != nil {
		c = s.ClaimsUpd.Update(c)
	}
	tok, err := s.Token(c)
	if err != nil {
		return Claims{}, "", err
	}
	maxAge := int(s.CookieDuration / time.Second)
	if c.SessionOnly {
		maxAge = 0 // a session cookie: gone when the browser closes
	}
	http.SetCookie(w, &http.Cookie{Name: s.JWTCookieName, Value: tok, Path: "/", Domain: s.JWTCookieDomain,
		MaxAge: maxAge, HttpOnly: true, Secure: s.SecureCookies, SameSite: s.SameSite})
	// The XSRF cookie is readable by scripts on purpose: the page copies it into X-XSRF-TOKEN, which a
	// cross-site attacker cannot do.
	http.SetCookie(w, &http.Cookie{Name: s.XSRFCookieName, Value: c.ID, Path: "/", Domain: s.JWTCookieDomain,
		MaxAge: maxAge, HttpOnly: false, Secure: s.SecureCookies, SameSite: s.SameSite})
	return c, tok, nil
}

// Get finds the token of a request: header X-JWT, then query token, then the JWT cookie (which
// needs the XSRF header). It returns the claims and the raw token. A cookie token that is expired
// but otherwise good comes back with its claims and ErrExpired, so the caller may refresh it.
func (s *Service) Get(r *http.Request) (Claims, string, error) {
	if tok := s.jwtHeader.value(r, s.JWTHeaderKey); tok != "" {
		return s.getNonCookie(tok)
	}
	if r.URL.RawQuery != "" { // checked first: parsing the query allocates
		if tok := r.URL.Query().Get(s.JWTQuery); tok != "" {
			return s.getNonCookie(tok)
		}
	}
	tok := cookieValue(r, s.JWTCookieName)
	if tok == "" {
		return Claims{}, "", ErrNoToken
	}
	c, err := s.Parse(tok)
	if err != nil && !errors.Is(err, ErrExpired) {
		return Claims{}, "", err
	}
	if err == nil || errors.Is(err, ErrExpired) {
		if xerr := s.checkXSRF(r, c.ID); xerr != nil {
			return Claims{}, "", xerr
		}
	}
	if err != nil && c.AuthTime == 0 && c.IssuedAt != nil && c.Issuer != s.Issuer {
		// A token of an accepted other issuer (go-pkgz/auth writes no auth_time) is bounded from its
		// iat, the time of its own last refresh, which is how long that library's cookie lives.
		c.AuthTime = c.IssuedAt.Unix()
	}
	if err != nil {
		// Session-only logins are refreshed too (their cookies stay session cookies, see Set): the
		// browser ends them when it closes, and CookieDuration still bounds them from the login.
		if c.AuthTime == 0 || !s.Now().Before(time.Unix(c.AuthTime, 0).Add(s.CookieDuration)) {
			return Claims{}, "", fmt.Errorf("%w: past the cookie lifetime", ErrInvalid)
		}
		return c, tok, err
	}
	return c, tok, nil
}

// getNonCookie parses a header or query token: no XSRF (a cross-site page cannot set these) and no
// refresh (the caller holds no cookie to refresh).
func (s *Service) getNonCookie(tok string) (Claims, string, error) {
	c, err := s.Parse(tok)
	if err != nil {
		if errors.Is(err, ErrExpired) {
			return Claims{}, "", fmt.Errorf("%w: expired", ErrInvalid)
		}
		return Claims{}, "", err
	}
	return c, tok, nil
}

func (s *Service) checkXSRF(r *http.Request, id string) error {
	if s.DisableXSRF || slices.Contains(s.XSRFIgnoreMethods, r.Method) {
		return nil
	}
	h := s.XSRFHeader(r)
	// Constant-time: the comparison must not leak how much of the id an attacker guessed.
	if h == "" || id == "" || subtle.ConstantTimeCompare([]byte(h), []byte(id)) != 1 {
		return ErrXSRF
	}
	return nil
}

// Reset removes the JWT and XSRF cookies (logout).
func (s *Service) Reset(w http.ResponseWriter) {
	for _, name := range []string{s.JWTCookieName, s.XSRFCookieName} {
		http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", Domain: s.JWTCookieDomain, MaxAge: -1,
			Expires: time.Unix(0, 0), HttpOnly: name == s.JWTCookieName, Secure: s.SecureCookies, SameSite: s.SameSite})
	}
}

// IsSessionRequest reports whether a login request asks for session-only cookies (session=1 or sess=1).
func IsSessionRequest(r *http.Request) bool {
	q := r.URL.Query()
	v := q.Get("session")
	if v == "" {
		v = q.Get("sess")
	}
	return v == "1" || strings.EqualFold(v, "true")
}
