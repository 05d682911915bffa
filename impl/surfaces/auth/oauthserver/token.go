package oauthserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// token is the token endpoint (RFC 6749 §4.1.3).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.tokenError(w, r, http.StatusBadRequest, "invalid_request", "malformed form body")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// §2.3.1: the credentials are form-urlencoded before being put in the header.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	client, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(secret), []byte(client.Secret)) != 1 {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
		}
		s.tokenError(w, r, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		if gt == "" {
			s.tokenError(w, r, http.StatusBadRequest, "invalid_request", "grant_type is required")
			return
		}
		s.tokenError(w, r, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code is supported")
		return
	}
	code := r.PostForm.Get("code")
	if code == "" {
		s.tokenError(w, r, http.StatusBadRequest, "invalid_request", "code is required")
		return
	}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes[code]
	switch {
	case !ok:
		s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "unknown authorization code")
		return
	case g.used:
		// A replayed code means it leaked: revoke what it bought (§4.1.2).
		delete(s.tokens, g.issuedTokenID)
		s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "authorization code already used")
		return
	case now.After(g.expires):
		delete(s.codes, code)
		s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "authorization code expired")
		return
	case g.clientID != client.ID:
		s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "authorization code was issued to another client")
		return
	case (g.redirectGiven || r.PostForm.Has("redirect_uri")) && r.PostForm.Get("redirect_uri") != g.redirectURI:
		s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request")
		return
	}
	if g.challenge != "" {
		v := r.PostForm.Get("code_verifier")
		sum := sha256.Sum256([]byte(v))
		if v == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			// Whoever holds the code without its verifier may have stolen it: the code dies.
			g.used = true
			s.tokenError(w, r, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
	}
	tok := randomToken()
	g.used = true
	g.issuedTokenID = tok
	s.tokens[tok] = &issued{user: g.user, expires: now.Add(s.opts.TokenTTL)}
	noStore(w)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok,
		"token_type":   "Bearer",
		"expires_in":   int(s.opts.TokenTTL / time.Second),
	})
}

// userInfo answers the logged-in user for a bearer token (RFC 6750 errors).
func (s *Server) userInfo(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	// The scheme name is case-insensitive (RFC 7235 §2.1), so "bearer x" is as good as "Bearer x".
	scheme, tok, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_request", "error_description": "bearer token required"})
		return
	}
	user, ok := s.Lookup(tok)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="oauth", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token", "error_description": "unknown or expired access token"})
		return
	}
	noStore(w)
	writeJSON(w, http.StatusOK, user)
}

// Lookup returns the user an unexpired access token was issued for: what the user-info endpoint
// answers, for a caller that serves user info in another shape (Paths.UserInfo "-").
func (s *Server) Lookup(accessToken string) (User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.tokens[accessToken]
	if ok && s.opts.Now().After(it.expires) {
		delete(s.tokens, accessToken)
		ok = false
	}
	if !ok {
		return User{}, false
	}
	return it.user, true
}

// gcLocked drops expired codes and tokens so an abandoned flow does not leak memory.
func (s *Server) gcLocked() {
	now := s.opts.Now()
	for k, g := range s.codes {
		if now.After(g.expires) {
			delete(s.codes, k)
		}
	}
	for k, t := range s.tokens {
		if now.After(t.expires) {
			delete(s.tokens, k)
		}
	}
}

func (s *Server) tokenError(w http.ResponseWriter, r *http.Request, status int, code, desc string) {
	s.log.InfoContext(r.Context(), "oauthserver: token refused", "error", code, "description", desc)
	noStore(w)
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

// randomToken returns 32 random bytes in hex: unguessable codes and tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
