package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/loginlimit"
)

// CredChecker checks a user's password (or a hash the caller prepared) on direct login.
type CredChecker interface {
	Check(user, password string) (ok bool, err error)
}

// CredCheckerFunc adapts a function to CredChecker.
type CredCheckerFunc func(user, password string) (ok bool, err error)

// Check calls f.
func (f CredCheckerFunc) Check(user, password string) (bool, error) { return f(user, password) }

// DirectHandler logs users in with credentials checked by the caller's CredChecker.
type DirectHandler struct {
	Params
	// ProviderName is the name it is mounted under.
	ProviderName string
	// CredChecker decides; required.
	CredChecker CredChecker
	// RawUserID, when set, gives the raw id of a user who passed CredChecker in place of the user
	// name, and sees the request (a tenant header, an account looked up by name). The site's
	// UserIDFunc (default token.UserID) still turns it into the stored id, so with GoPkgzUserID the
	// id is go-pkgz's AddDirectProviderWithUserIDFunc id: name + "_" + GoPkgzHash(raw id). An empty
	// raw id refuses the login (500): it would give every user the same id.
	RawUserID DirectUserIDFunc
}

// DirectUserIDFunc maps a direct login's user name, with its request, to the user's raw id.
type DirectUserIDFunc func(user string, r *http.Request) string

// Name returns the provider name.
func (h *DirectHandler) Name() string { return h.ProviderName }

type credentials struct {
	User   string `json:"user"`
	Passwd string `json:"passwd"`
	Aud    string `json:"aud"`
}

// maxCredLen bounds user and password so a checker never hashes megabytes.
const maxCredLen = 1024

// LoginHandler accepts POST form, POST JSON (user, passwd, aud) or GET query, plus query
// session=1|0. Success sets the cookies and answers the user as JSON; bad credentials are a 403.
func (h *DirectHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	var c credentials
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		c = credentials{User: q.Get("user"), Passwd: q.Get("passwd"), Aud: q.Get("aud")}
	case http.MethodPost:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch mt {
		case "application/json":
			if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
				if web.IsTooLarge(err) {
					web.WriteError(w, r, http.StatusRequestEntityTooLarge, web.TooLarge())
					return
				}
				WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "body is not a JSON object with user, passwd and aud")
				return
			}
		case "application/x-www-form-urlencoded", "multipart/form-data":
			if err := r.ParseForm(); err != nil {
				if web.IsTooLarge(err) {
					web.WriteError(w, r, http.StatusRequestEntityTooLarge, web.TooLarge())
					return
				}
				WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "unreadable form")
				return
			}
			c = credentials{User: r.PostForm.Get("user"), Passwd: r.PostForm.Get("passwd"), Aud: r.PostForm.Get("aud")}
		default:
			web.WriteError(w, r, http.StatusUnsupportedMediaType, web.UnsupportedMediaType())
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		WriteError(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "use GET or POST")
		return
	}
	if c.User == "" || c.Passwd == "" || len(c.User) > maxCredLen || len(c.Passwd) > maxCredLen {
		WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "user and passwd are required")
		return
	}
	if !h.JwtService.AllowedAudience(c.Aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	if h.CredChecker == nil {
		web.Internal(w, r, errors.New("direct provider "+h.ProviderName+" without CredChecker"))
		return
	}
	// The check runs under the service's failed-login limit (loginlimit): a login refused by it
	// is 429 without the password being checked, and only a checked, wrong password counts.
	check := func(context.Context) error {
		ok, err := h.CredChecker.Check(c.User, c.Passwd)
		if err == nil && !ok {
			return loginlimit.ErrBadCredentials
		}
		return err
	}
	var err error
	if h.LoginGuard != nil {
		err = loginlimit.Run(w, r, h.LoginGuard, c.User, check)
	} else {
		err = check(r.Context())
	}
	if refusal.WriteLoginRefused(w, r, err) {
		return
	}
	if errors.Is(err, loginlimit.ErrBadCredentials) {
		WriteError(w, r, http.StatusForbidden, CodeBadCredentials, "incorrect user or password")
		return
	}
	if err != nil {
		web.Internal(w, r, fmt.Errorf("direct %s: credential check: %w", h.ProviderName, err))
		return
	}
	u := userFor(c.User)
	if h.RawUserID != nil {
		if u.ID = h.RawUserID(c.User, r); u.ID == "" {
			web.Internal(w, r, errors.New("direct provider "+h.ProviderName+": RawUserID returned an empty id"))
			return
		}
	}
	// Direct logins answer with JSON only: the caller is a script, not a browser redirect chain.
	Finish(w, r, h.Params, h.ProviderName, LoginResult{User: u, Aud: c.Aud, Session: sessionParam(r)})
}

// AuthHandler is unused by direct login: there is no callback.
func (h *DirectHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "this provider has no callback")
}

// LogoutHandler clears the session cookies.
func (h *DirectHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	Logout(w, h.JwtService)
}
