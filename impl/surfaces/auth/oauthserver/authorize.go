package oauthserver

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// authRequest is a parsed and validated authorization request.
type authRequest struct {
	client        Client
	redirectURI   string
	redirectGiven bool
	state         string
	challenge     string
	// params are the request's parameters as the login form sends them back.
	params url.Values
}

// authorize is the authorization endpoint (RFC 6749 §4.1.1). A GET carries the request in its
// query; a POST (the login form, §3.1 allows POST) in its form body, each parameter falling back to
// the URL's query, so a form may post back to the authorization URL or carry the request itself.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			s.showError(w, r, "invalid_request", "malformed form body")
			return
		}
		q = r.Form // body values first, then the query's
	}
	ar, ok := s.parseAuthRequest(w, r, q)
	if !ok {
		return
	}
	if !s.opts.WithLoginPage {
		user, ok := s.opts.Approve(r)
		if !ok {
			s.redirectError(w, r, ar, "access_denied", "the user denied the request")
			return
		}
		s.approve(w, r, ar, user)
		return
	}
	if r.Method == http.MethodGet {
		s.loginPage(w, r, ar, http.StatusOK)
		return
	}
	if r.PostForm.Get("deny") != "" {
		s.redirectError(w, r, ar, "access_denied", "the user denied the request")
		return
	}
	user, ok := s.opts.Authenticate(r.PostForm.Get("username"), r.PostForm.Get("password"))
	if !ok {
		s.loginPage(w, r, ar, http.StatusUnauthorized)
		return
	}
	s.approve(w, r, ar, user)
}

// parseAuthRequest validates the request's parameters; on a refusal it has answered already.
func (s *Server) parseAuthRequest(w http.ResponseWriter, r *http.Request, q url.Values) (authRequest, bool) {
	// Client and redirect URI first: until both are known-good, nothing may be redirected.
	client, ok := s.clients[q.Get("client_id")]
	if !ok {
		s.showError(w, r, "invalid_client", "unknown client_id")
		return authRequest{}, false
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" && len(client.RedirectURIs) == 1 {
		redirectURI = client.RedirectURIs[0] // §3.1.2.3: may be omitted when only one is registered
	}
	match := func(u string) bool { return slices.Contains(client.RedirectURIs, u) }
	if client.MatchRedirectURI != nil {
		match = client.MatchRedirectURI
	}
	if redirectURI == "" || !match(redirectURI) {
		s.showError(w, r, "invalid_request", "redirect_uri does not match a registered redirect URI")
		return authRequest{}, false
	}
	ar := authRequest{client: client, redirectURI: redirectURI, redirectGiven: q.Get("redirect_uri") != "",
		state: q.Get("state"), params: url.Values{}}
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method"} {
		if v := q.Get(k); v != "" {
			ar.params.Set(k, v)
		}
	}
	if q.Get("response_type") != "code" {
		s.redirectError(w, r, ar, "unsupported_response_type", "only response_type=code is supported")
		return authRequest{}, false
	}
	c := q.Get("code_challenge")
	switch {
	case c == "" && s.opts.RequirePKCE:
		s.redirectError(w, r, ar, "invalid_request", "PKCE is required: send an S256 code_challenge")
		return authRequest{}, false
	case c == "":
	case q.Get("code_challenge_method") != "S256":
		// "plain" gives no protection against a leaked code; refuse it (RFC 7636 §4.4.1 allows that).
		s.redirectError(w, r, ar, "invalid_request", "code_challenge_method must be S256")
		return authRequest{}, false
	case len(c) != 43:
		s.redirectError(w, r, ar, "invalid_request", "code_challenge must be a base64url SHA-256 digest")
		return authRequest{}, false
	}
	ar.challenge = c
	return ar, true
}

// approve issues a one-time code and sends the user agent back to the client.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, ar authRequest, user User) {
	code := randomToken()
	s.mu.Lock()
	s.gcLocked()
	s.codes[code] = &grant{
		clientID:      ar.client.ID,
		redirectURI:   ar.redirectURI,
		redirectGiven: ar.redirectGiven,
		user:          user,
		challenge:     ar.challenge,
		expires:       s.opts.Now().Add(s.opts.CodeTTL),
	}
	s.mu.Unlock()
	v := url.Values{"code": {code}}
	if ar.state != "" {
		v.Set("state", ar.state)
	}
	redirect(w, r, withQuery(ar.redirectURI, v))
}

// showError answers an authorization error that must not be redirected (§4.1.2.1).
func (s *Server) showError(w http.ResponseWriter, r *http.Request, code, desc string) {
	s.log.InfoContext(r.Context(), "oauthserver: authorization refused", "error", code, "description", desc)
	noStore(w)
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

// redirectError sends an authorization error back to the client (§4.1.2.1).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, ar authRequest, code, desc string) {
	s.log.InfoContext(r.Context(), "oauthserver: authorization refused", "error", code, "description", desc, "client_id", ar.client.ID)
	v := url.Values{"error": {code}, "error_description": {desc}}
	if ar.state != "" {
		v.Set("state", ar.state)
	}
	redirect(w, r, withQuery(ar.redirectURI, v))
}

// redirect sends the user agent back to the client: 302 after a GET, 303 after the login form's
// POST, so the browser fetches the callback with GET (RFC 9110 §15.4.4).
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, to, status)
}

// withQuery appends v to u, keeping a query u already has (§3.1.2 allows one).
func withQuery(u string, v url.Values) string {
	if strings.Contains(u, "?") {
		return u + "&" + v.Encode()
	}
	return u + "?" + v.Encode()
}
