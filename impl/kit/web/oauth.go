package web

import "net/http"

// OAuthError is the RFC 6749 §5.2 error body, the one refusal shape of an OAuth token endpoint
// (orders' POST /oauth/token), whose clients read error, not code.
type OAuthError struct {
	// Error is one of §5.2's codes: invalid_request, invalid_client, invalid_grant,
	// unsupported_grant_type, or §4.1.2.1's temporarily_unavailable and server_error.
	Error string `json:"error"`
	// Description is the sentence for the developer; it never carries internal error text.
	Description string `json:"error_description,omitempty"`
}

// WriteOAuthError answers a token endpoint's refusal: the status, the §5.2 body, and the headers
// §5.1 asks of every token response (Cache-Control: no-store, Pragma: no-cache). Every refusal of
// a token endpoint is written here, the endpoint's own and the input screen's before it.
// The code is the request's refusal code (RefusalCode), as WriteError's is.
func WriteOAuthError(w http.ResponseWriter, r *http.Request, status int, code, description string) {
	noteRefusal(r, code)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	WriteJSON(w, status, OAuthError{Error: code, Description: description})
}
