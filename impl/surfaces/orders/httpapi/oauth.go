package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/triadhq/triad/impl/credentials/device"
	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// isForm reports whether a Content-Type is application/x-www-form-urlencoded (parameters allowed).
func isForm(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// tokenResponse is the RFC 6749 §5.1 success body; no refresh token is issued.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// issueToken is POST /oauth/token: the resource owner password credentials grant (RFC 6749 §4.3).
// Parameters may come in the query string (as the original API sent them) or in a form body;
// the client may authenticate with query or form parameters or with HTTP Basic (§2.3.1), but
// with one method only.
func (a *API) issueToken(w http.ResponseWriter, r *http.Request) {
	// §5.1: responses carrying tokens or credentials errors must not be cached.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	// A body is a form or nothing (the query form of the original API sends none; the length is
	// asked, not the body, which the body limit has wrapped: -1 is a chunked body). Left to
	// ParseForm, a JSON body would be skipped silently and the client told that grant_type is
	// missing; a wrong Content-Type is 415 on every operation, here too.
	if r.ContentLength != 0 && !isForm(r.Header.Get("Content-Type")) {
		web.WriteError(w, r, http.StatusUnsupportedMediaType, web.UnsupportedMediaType())
		return
	}
	if err := r.ParseForm(); err != nil {
		if web.IsTooLarge(err) {
			web.WriteError(w, r, http.StatusRequestEntityTooLarge, web.TooLarge())
			return
		}
		oauthFail(w, r, http.StatusBadRequest, "invalid_request", "the request parameters could not be parsed")
		return
	}
	// §3.2: parameters must not be repeated (a value in both query and body counts twice).
	for name, vals := range r.Form {
		if len(vals) > 1 {
			oauthFail(w, r, http.StatusBadRequest, "invalid_request", "parameter "+name+" is repeated")
			return
		}
	}

	id, secret, basic := r.BasicAuth()
	if basic {
		if r.Form.Has("client_id") || r.Form.Has("client_secret") {
			oauthFail(w, r, http.StatusBadRequest, "invalid_request", "use exactly one client authentication method")
			return
		}
		// §2.3.1: Basic credentials are form-encoded before base64.
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			a.invalidClient(w, r)
			return
		}
	} else {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	// Both comparisons always run (no short-circuit), so the time taken does not tell a caller
	// whether the client id alone was right.
	idOK := equalSecret(id, a.opts.ClientID)
	secretOK := equalSecret(secret, a.opts.ClientSecret)
	if !idOK || !secretOK {
		a.invalidClient(w, r)
		return
	}

	switch gt := r.Form.Get("grant_type"); gt {
	case "password":
	case "":
		oauthFail(w, r, http.StatusBadRequest, "invalid_request", "grant_type is required")
		return
	default:
		oauthFail(w, r, http.StatusBadRequest, "unsupported_grant_type", "only the password grant is supported")
		return
	}
	username, pw := r.Form.Get("username"), r.Form.Get("password")
	if username == "" {
		oauthFail(w, r, http.StatusBadRequest, "invalid_request", "username is required")
		return
	}
	if pw == "" {
		oauthFail(w, r, http.StatusBadRequest, "invalid_request", "password is required")
		return
	}
	// The shared login guard (impl/credentials/loginguard): a busy hasher is refused before any database work,
	// the attempt is reserved against the failed-login limit before the password is checked, and
	// only a wrong password keeps it counted. A blocked login keeps invalid_grant because RFC 6749
	// §5.2 has no rate-limit code and the grant is what is refused; 429 and Retry-After say it is
	// temporary.
	// A client that logged in to this account before presents its device cookie, which lets it
	// past the locks others' guesses set (loginguard.Guard.LoginDevice).
	presented := device.Presented(r.CookiesNamed(DeviceCookie))
	var u orders.User
	keep, err := a.edge.Guard.LoginDevice(r.Context(), username, r.RemoteAddr, presented, func(ctx context.Context) (err error) {
		u, err = a.svc.Authenticate(ctx, username, pw)
		return err
	})
	secs, refusedMsg, refused := loginguard.Refused(err)
	switch {
	case err == nil:
	case errors.Is(err, password.ErrBusy):
		w.Header().Set("Retry-After", "1")
		oauthFail(w, r, http.StatusServiceUnavailable, "temporarily_unavailable", refusal.MessageServerBusy)
		return
	case errors.Is(err, password.ErrClientBusy):
		// RFC 6749 has no rate-limit code either: temporarily_unavailable, with 429 (RFC 6585)
		// and Retry-After saying that this client, not the server, is over its share.
		w.Header().Set("Retry-After", "1")
		oauthFail(w, r, http.StatusTooManyRequests, "temporarily_unavailable", refusal.MessageTooManyRequests)
		return
	case refused:
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		oauthFail(w, r, http.StatusTooManyRequests, "invalid_grant", refusedMsg)
		return
	case errors.Is(err, domainerr.InvalidCredentials):
		oauthFail(w, r, http.StatusBadRequest, "invalid_grant", "username or password is incorrect")
		return
	default:
		a.oauthInternal(w, r, err)
		return
	}
	tok, err := a.edge.Tokens.Issue(r.Context(), orders.Principal{ID: u.ID, Username: u.Username, Type: u.Type})
	if err != nil {
		a.oauthInternal(w, r, err)
		return
	}
	if keep != "" {
		http.SetCookie(w, a.edge.DeviceCookie(keep))
	}
	web.WriteJSON(w, http.StatusOK, tokenResponse{AccessToken: tok, TokenType: "bearer", ExpiresIn: int64(a.edge.Tokens.TTL().Seconds())})
}

// equalSecret compares in constant time; hashing first hides the lengths too.
func equalSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

func (a *API) invalidClient(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="orders"`)
	oauthFail(w, r, http.StatusUnauthorized, "invalid_client", "client authentication failed")
}

func (a *API) oauthInternal(w http.ResponseWriter, r *http.Request, err error) {
	// An unreachable database (503 database_unavailable), a statement cancelled at its time limit
	// (503 server_busy) and a client that went away are classified where every surface's failures
	// are.
	if web.DatabaseUnavailable(err) || web.StatementCancelled(err) || r.Context().Err() != nil {
		web.Internal(w, r, err)
		return
	}
	web.LogFailure(w, r, fmt.Errorf("orders: token endpoint: %w", err))
	oauthFail(w, r, http.StatusInternalServerError, "server_error", "internal server error")
}

// oauthFail answers a refusal of the token endpoint with the RFC 6749 §5.2 body.
func oauthFail(w http.ResponseWriter, r *http.Request, status int, code, desc string) {
	web.WriteOAuthError(w, r, status, code, desc)
}
