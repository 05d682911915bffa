package refusal

import (
	"net/http"

	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/web"
)

// The error codes of an OAuth 2.0 token endpoint (RFC 6749 §5.2, and §4.1.2.1's
// temporarily_unavailable and server_error), the only codes its refusals carry.
const (
	OAuthInvalidRequest         = "invalid_request"
	OAuthInvalidClient          = "invalid_client"
	OAuthInvalidGrant           = "invalid_grant"
	OAuthUnsupportedGrantType   = "unsupported_grant_type"
	OAuthTemporarilyUnavailable = "temporarily_unavailable"
	OAuthServerError            = "server_error"
)

// MessageInvalidGrant is the one sentence of a login whose account is unknown or whose password
// is wrong (the two are one answer, so a caller cannot tell which).
const MessageInvalidGrant = "username or password is incorrect"

// OAuthLogin is the one table of a token endpoint's refused logins (impl/kit/tokenedge's password
// grant): the login guard's outcomes (impl/credentials/loginguard) with RFC 6749's codes, written
// in its §5.2 body by WriteOAuth. The busy hasher, the client over its share and the failed-login
// limit keep the status, message and Retry-After of the entries every other login answers them
// with (ServerBusy, ClientBusy, TooManyAttempts); only the code is RFC 6749's. RFC 6749 has no
// rate-limit code: a blocked login is invalid_grant (the grant is what is refused), and 429 with
// Retry-After says it is temporary; a client over its share of the hasher is
// temporarily_unavailable with 429 (RFC 6585), saying that this client, not the server, is busy.
var OAuthLogin = Table{
	withCode(ServerBusy, OAuthTemporarilyUnavailable),
	withCode(ClientBusy, OAuthTemporarilyUnavailable),
	withCode(TooManyAttempts, OAuthInvalidGrant),
	{Err: domainerr.InvalidCredentials, Refusal: Refusal{Status: http.StatusBadRequest, Code: OAuthInvalidGrant,
		Message: MessageInvalidGrant}},
}

// withCode is e answering code instead of its own.
func withCode(e Entry, code string) Entry {
	e.Code = code
	return e
}

// WriteOAuth is Write in RFC 6749's §5.2 body (web.WriteOAuthError: the code as error, the
// message as error_description, Cache-Control: no-store): the rendering of a token endpoint's
// table (OAuthLogin).
func (t Table) WriteOAuth(w http.ResponseWriter, r *http.Request, err error) bool {
	rf, ok := t.Lookup(err)
	if !ok {
		return false
	}
	web.WriteOAuthError(w, r, rf.Status, rf.Code, rf.headers(w, err))
	return true
}
