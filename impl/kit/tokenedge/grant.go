package tokenedge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"mime"
	"net/http"
	"net/url"

	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
)

// Login runs the surface's password login of account under the edge's login guard and issues the
// principal check returns its access token: the one login of every token-issuing surface, the
// generated ones (brands' LoginUser) and the token endpoint (PasswordGrant) alike. The client's
// address and device cookie come from ctx (web.ClientAddrOf, web.DeviceOf: the edge puts them
// there, Surface.ClientAddr and Surface.DeviceOps for a generated operation, PasswordGrant for its
// own), and the device token the client should keep goes back there (web.KeepDevice), for the
// edge to set. Its errors are the guard's (loginguard.Guard.LoginDevice: password.ErrBusy,
// password.ErrClientBusy, a *loginguard.Blocked, check's), unwrapped, for the surface's refusal
// table (or refusal.OAuthLogin) to answer.
func (e *Edge[P]) Login(ctx context.Context, account string, check func(context.Context) (P, error)) (token string, err error) {
	var p P
	keep, err := e.Guard.LoginDevice(ctx, account, web.ClientAddrOf(ctx), web.DeviceOf(ctx), func(ctx context.Context) (err error) {
		p, err = check(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	web.KeepDevice(ctx, keep)
	return e.Tokens.Issue(ctx, p)
}

// Client is the one OAuth client a token endpoint serves (RFC 6749 §2.3).
type Client struct{ ID, Secret string }

// tokenResponse is the RFC 6749 §5.1 success body; no refresh token is issued.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// PasswordGrant is the surface's OAuth 2.0 token endpoint: the resource owner password credentials
// grant (RFC 6749 §4.3) for client, whose password check is authenticate (the principal, or
// domainerr.InvalidCredentials for an unknown user or a wrong password). Parameters may come in the
// query string (as orders' original API sent them) or in a form body; the client authenticates with
// query or form parameters or with HTTP Basic (§2.3.1), but with one method only. It is served by
// hand, not by the generated strict server, because RFC 6749 asks what the spec's validator cannot
// say; but the login is the edge's (Login): the login guard, the device cookie
// (Surface.DeviceCookie, read from the request and set on a success) and the client address, with
// the guard's refusals answered from the one table of RFC 6749 codes (refusal.OAuthLogin). Every
// answer carries Cache-Control: no-store (§5.1); a refusal has the §5.2 body, invalid_client a
// WWW-Authenticate: Basic challenge of the surface's realm.
func (e *Edge[P]) PasswordGrant(client Client, authenticate func(ctx context.Context, username, password string) (P, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// §5.1: responses carrying tokens or credentials errors must not be cached.
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		// A body is a form or nothing (the query form of the original API sends none; the length
		// is asked, not the body, which the body limit has wrapped: -1 is a chunked body). Left to
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
			web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "the request parameters could not be parsed")
			return
		}
		// §3.2: parameters must not be repeated (a value in both query and body counts twice).
		for name, vals := range r.Form {
			if len(vals) > 1 {
				web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "parameter "+name+" is repeated")
				return
			}
		}
		id, secret, basic := r.BasicAuth()
		if basic {
			if r.Form.Has("client_id") || r.Form.Has("client_secret") {
				web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "use exactly one client authentication method")
				return
			}
			// §2.3.1: Basic credentials are form-encoded before base64.
			var err1, err2 error
			id, err1 = url.QueryUnescape(id)
			secret, err2 = url.QueryUnescape(secret)
			if err1 != nil || err2 != nil {
				e.invalidClient(w, r)
				return
			}
		} else {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		// Both comparisons always run (no short-circuit), so the time taken does not tell a caller
		// whether the client id alone was right.
		idOK := equalSecret(id, client.ID)
		secretOK := equalSecret(secret, client.Secret)
		if !idOK || !secretOK {
			e.invalidClient(w, r)
			return
		}
		switch gt := r.Form.Get("grant_type"); gt {
		case "password":
		case "":
			web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "grant_type is required")
			return
		default:
			web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthUnsupportedGrantType, "only the password grant is supported")
			return
		}
		username, pw := r.Form.Get("username"), r.Form.Get("password")
		if username == "" {
			web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "username is required")
			return
		}
		if pw == "" {
			web.WriteOAuthError(w, r, http.StatusBadRequest, refusal.OAuthInvalidRequest, "password is required")
			return
		}
		// The edge's login, as a generated login operation gets it (Surface.ClientAddr,
		// Surface.DeviceOps): the client address, and the device cookie in and out.
		ctx, kept := web.WithClientAddr(r.Context(), r), func() string { return "" }
		if e.s.DeviceCookie != "" {
			ctx, kept = web.WithDevice(ctx, r, e.s.DeviceCookie)
		}
		tok, err := e.Login(ctx, username, func(ctx context.Context) (P, error) { return authenticate(ctx, username, pw) })
		if err != nil {
			if !refusal.OAuthLogin.WriteOAuth(w, r, err) {
				e.grantFailed(w, r, err)
			}
			return
		}
		web.SetDevice(w, *e.deviceCookie(), kept())
		web.WriteJSON(w, http.StatusOK, tokenResponse{AccessToken: tok, TokenType: "bearer", ExpiresIn: int64(e.Tokens.TTL().Seconds())})
	}
}

// isForm reports whether a Content-Type is application/x-www-form-urlencoded (parameters allowed).
func isForm(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// equalSecret compares in constant time; hashing first hides the lengths too.
func equalSecret(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// invalidClient answers a client that failed to authenticate: 401 with the Basic challenge of the
// surface's realm (§5.2).
func (e *Edge[P]) invalidClient(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="`+e.s.Name+`"`)
	web.WriteOAuthError(w, r, http.StatusUnauthorized, refusal.OAuthInvalidClient, "client authentication failed")
}

// grantFailed answers a login that failed for no reason of the table: an unreachable database (503
// database_unavailable), a statement cancelled at its time limit (503 server_busy) and a client that
// went away are classified where every surface's failures are (web.Internal); anything else is a
// logged 500 server_error in the §5.2 body.
func (e *Edge[P]) grantFailed(w http.ResponseWriter, r *http.Request, err error) {
	if web.DatabaseUnavailable(err) || web.StatementTimedOut(err) || r.Context().Err() != nil {
		web.Internal(w, r, err)
		return
	}
	web.LogFailure(w, r, fmt.Errorf("%s: token endpoint: %w", e.s.Name, err))
	web.WriteOAuthError(w, r, http.StatusInternalServerError, refusal.OAuthServerError, "internal server error")
}
