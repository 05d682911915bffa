// Package providertest runs stand-ins of the identity providers the auth service talks to, for
// tests: each listens on a random local port and speaks its provider's real protocol — the OAuth 2.0
// authorize/token endpoints with that provider's token-response format, and its user-info API with
// the provider's own JSON shape (GitHub /user, Google OpenID userinfo, Facebook Graph /me, Microsoft
// Graph /me, Yandex login.yandex.ru/info, Battle.net /oauth/userinfo, Patreon identity v2 JSON:API),
// plus Twitter's OAuth 1.0a, Apple's Sign in with Apple and the Telegram bot API in sibling files.
//
// The OAuth 2.0 fakes run the tree's one authorization server (package oauthserver) at the
// provider's paths and add only what differs between providers. They approve every authorization
// request at once (as if the user clicked "Allow"), and let a test inject the failures a real provider produces: a denied consent, a failing token exchange, a
// failing or id-less user-info answer.
package providertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/oauthserver"
)

// Kind names which provider a fake OAuth2 server imitates.
type Kind string

// The OAuth 2.0 providers the fakes imitate.
const (
	GitHub    Kind = "github"
	Google    Kind = "google"
	Facebook  Kind = "facebook"
	Microsoft Kind = "microsoft"
	Yandex    Kind = "yandex"
	BattleNet Kind = "battlenet"
	Patreon   Kind = "patreon"
)

// Profile is the account the fake provider logs in.
type Profile struct {
	ID      string // the provider's user id (a number for GitHub/Battle.net, sent as a JSON number)
	Name    string // display name
	Login   string // login / username / battletag
	Picture string // avatar URL
	Email   string
}

// paths of each kind's endpoints, mirroring the real ones.
type paths struct{ authorize, token, info string }

var kindPaths = map[Kind]paths{
	GitHub:    {"/login/oauth/authorize", "/login/oauth/access_token", "/user"},
	Google:    {"/o/oauth2/v2/auth", "/token", "/v1/userinfo"},
	Facebook:  {"/v19.0/dialog/oauth", "/v19.0/oauth/access_token", "/me"},
	Microsoft: {"/{tenant}/oauth2/v2.0/authorize", "/{tenant}/oauth2/v2.0/token", "/v1.0/me"},
	Yandex:    {"/authorize", "/token", "/info"},
	BattleNet: {"/authorize", "/token", "/oauth/userinfo"},
	Patreon:   {"/oauth2/authorize", "/api/oauth2/token", "/api/oauth2/v2/identity"},
}

// OAuth2 is a running fake OAuth 2.0 provider: an oauthserver at the provider's paths, approving at
// once, with the provider's token-response and user-info formats around it.
type OAuth2 struct {
	Kind         Kind
	ClientID     string
	ClientSecret string
	Server       *httptest.Server
	// Tenant is the Microsoft tenant the fake serves ("common" unless set before use).
	Tenant string

	core     *oauthserver.Server
	mu       sync.Mutex
	profile  Profile
	fail     Failures
	requests []AuthRequest
}

// Failures are the misbehaviours a test can switch on.
type Failures struct {
	// Deny answers the authorization request with error=access_denied (the user clicked "Cancel").
	Deny bool
	// Token makes the token endpoint refuse the code (invalid_grant).
	Token bool
	// Info makes the user-info endpoint answer 500.
	Info bool
	// InfoNoID makes the user-info answer lack the user id.
	InfoNoID bool
}

// AuthRequest records what a client sent to the authorization endpoint.
type AuthRequest struct {
	Query url.Values
}

// NewOAuth2 starts a fake of kind for one client; it stops when the test ends.
func NewOAuth2(t testing.TB, kind Kind, clientID, clientSecret string) *OAuth2 {
	t.Helper()
	p, ok := kindPaths[kind]
	if !ok {
		t.Fatalf("providertest: unknown kind %q", kind)
	}
	f := &OAuth2{Kind: kind, ClientID: clientID, ClientSecret: clientSecret, Tenant: "common",
		profile: Profile{ID: "1001", Name: "Test User", Login: "tester", Picture: "", Email: "tester@example.com"}}
	f.Server = httptest.NewUnstartedServer(nil)
	core, err := oauthserver.New(oauthserver.Options{
		URL:   "http://" + f.Server.Listener.Addr().String(),
		Paths: oauthserver.Paths{Authorize: p.authorize, Token: p.token, UserInfo: "-"},
		// A third party accepts whatever callback the site under test registered with it.
		Clients: []oauthserver.Client{{ID: clientID, Secret: clientSecret, MatchRedirectURI: func(string) bool { return true }}},
		Approve: f.approve,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.core = core
	mux := http.NewServeMux()
	mux.Handle("GET "+p.authorize, core)
	mux.HandleFunc("POST "+p.token, f.token)
	mux.HandleFunc("GET "+p.info, f.info)
	f.Server.Config.Handler = mux
	f.Server.Start()
	t.Cleanup(f.Server.Close)
	return f
}

func (f *OAuth2) path(p string) string {
	return f.Server.URL + strings.ReplaceAll(p, "{tenant}", f.Tenant)
}

// AuthURL, TokenURL and InfoURL are the fake's endpoints, to override a provider's defaults.
func (f *OAuth2) AuthURL() string { return f.path(kindPaths[f.Kind].authorize) }

// TokenURL is the fake's token endpoint.
func (f *OAuth2) TokenURL() string { return f.path(kindPaths[f.Kind].token) }

// InfoURL is the fake's user-info endpoint, with the query the real API needs.
func (f *OAuth2) InfoURL() string {
	u := f.path(kindPaths[f.Kind].info)
	switch f.Kind {
	case Facebook:
		return u + "?fields=id,name,picture"
	case Yandex:
		return u + "?format=json"
	case Patreon:
		return u + "?" + url.Values{"fields[user]": {"full_name,image_url"}}.Encode()
	}
	return u
}

// SetProfile sets the account the next logins are for.
func (f *OAuth2) SetProfile(p Profile) { f.mu.Lock(); f.profile = p; f.mu.Unlock() }

// Fail switches failures on (or off with the zero value).
func (f *OAuth2) Fail(x Failures) { f.mu.Lock(); f.fail = x; f.mu.Unlock() }

// Requests returns the authorization requests seen so far.
func (f *OAuth2) Requests() []AuthRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]AuthRequest(nil), f.requests...)
}

// approve records each valid authorization request and approves it at once, unless Deny is on.
// The user info is rendered from the profile when it is asked for, so the approved user is a
// placeholder.
func (f *OAuth2) approve(r *http.Request) (oauthserver.User, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, AuthRequest{Query: r.URL.Query()})
	return oauthserver.User{ID: f.profile.ID}, !f.fail.Deny
}

// token runs the server's token endpoint and answers in the provider's format.
func (f *OAuth2) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fail := f.fail.Token
	f.mu.Unlock()
	if fail {
		f.tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	rec := httptest.NewRecorder()
	f.core.ServeHTTP(rec, r)
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		f.tokenError(w, rec.Code, body.Error)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	// GitHub answers form-encoded unless the client asks for JSON; the others answer JSON.
	if f.Kind == GitHub && !strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		_, _ = w.Write([]byte(url.Values{"access_token": {body.AccessToken}, "scope": {""}, "token_type": {"bearer"}}.Encode()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": body.AccessToken, "token_type": "Bearer", "expires_in": 3600})
}

func (f *OAuth2) tokenError(w http.ResponseWriter, status int, code string) {
	if f.Kind == GitHub {
		// GitHub reports a bad code with 200 and an error field, which clients must still treat as failure.
		writeJSON(w, http.StatusOK, map[string]string{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
		return
	}
	writeJSON(w, status, map[string]string{"error": code})
}

// bearer extracts the access token the way the real API accepts it, and only that way: Yandex's
// login.yandex.ru/info wants "Authorization: OAuth <token>", GitHub takes "token" or "Bearer",
// Facebook's Graph API also reads an access_token query parameter, the others take a Bearer header.
func (f *OAuth2) bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	schemes := []string{"Bearer ", "bearer "}
	switch f.Kind {
	case Yandex:
		schemes = []string{"OAuth "}
	case GitHub:
		schemes = append(schemes, "token ")
	case Facebook:
		if t := r.URL.Query().Get("access_token"); t != "" {
			return t
		}
	}
	for _, scheme := range schemes {
		if t, ok := strings.CutPrefix(h, scheme); ok {
			return t
		}
	}
	return ""
}

func (f *OAuth2) info(w http.ResponseWriter, r *http.Request) {
	_, known := f.core.Lookup(f.bearer(r))
	f.mu.Lock()
	fail, p := f.fail, f.profile
	f.mu.Unlock()
	if !known {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	if fail.Info {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"message": "Server Error"})
		return
	}
	if fail.InfoNoID {
		p.ID = ""
	}
	writeJSON(w, http.StatusOK, f.userJSON(r, p))
}

// userJSON renders p in the provider's own user-info shape.
func (f *OAuth2) userJSON(r *http.Request, p Profile) any {
	switch f.Kind {
	case GitHub:
		// GitHub sends null, not "", for a profile without a display name or public e-mail.
		return map[string]any{"login": p.Login, "id": jsonNumber(p.ID), "node_id": "MDQ6VXNlcjE=", "avatar_url": p.Picture,
			"html_url": "https://github.com/" + p.Login, "type": "User", "name": nullIfEmpty(p.Name), "email": nullIfEmpty(p.Email)}
	case Google:
		return omitEmpty(map[string]any{"sub": p.ID, "name": p.Name, "given_name": p.Name, "picture": p.Picture,
			"email": p.Email, "email_verified": true, "locale": "en"})
	case Facebook:
		// Graph API returns only the requested fields.
		out := map[string]any{}
		for _, fld := range strings.Split(r.URL.Query().Get("fields"), ",") {
			switch fld {
			case "id":
				if p.ID != "" {
					out["id"] = p.ID
				}
			case "name":
				out["name"] = p.Name
			case "picture":
				// Without a photo Graph still answers a URL: the generic silhouette, flagged as such.
				pic := p.Picture
				if pic == "" {
					pic = "https://scontent.xx.fbcdn.net/v/t1.30497-1/84628273_176159830277856_972693363922829312_n.jpg"
				}
				out["picture"] = map[string]any{"data": map[string]any{"height": 50, "width": 50,
					"is_silhouette": p.Picture == "", "url": pic}}
			case "email":
				out["email"] = p.Email
			}
		}
		return out
	case Microsoft:
		return omitEmpty(map[string]any{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
			"id": p.ID, "displayName": p.Name, "userPrincipalName": p.Email, "mail": p.Email, "givenName": p.Name})
	case Yandex:
		out := omitEmpty(map[string]any{"id": p.ID, "login": p.Login, "client_id": f.ClientID, "display_name": p.Name,
			"real_name": p.Name, "default_email": p.Email, "psuid": "1.AAA"})
		if p.Picture != "" {
			out["default_avatar_id"] = p.Picture
			out["is_avatar_empty"] = false
		} else {
			// Yandex still names a (placeholder) avatar id for users without one.
			out["default_avatar_id"] = "0/0-0"
			out["is_avatar_empty"] = true
		}
		return out
	case BattleNet:
		return map[string]any{"sub": p.ID, "id": jsonNumber(p.ID), "battletag": p.Login}
	case Patreon:
		data := map[string]any{"type": "user", "attributes": map[string]any{"full_name": p.Name, "image_url": p.Picture}}
		if p.ID != "" {
			data["id"] = p.ID
		}
		return map[string]any{"data": data, "links": map[string]any{"self": "https://www.patreon.com/api/oauth2/v2/user/" + p.ID}}
	}
	return nil
}

// jsonNumber renders a numeric id as a JSON number (null when empty), as GitHub and Twitter do.
func jsonNumber(s string) any {
	if s == "" {
		return nil
	}
	return json.Number(s)
}

// nullIfEmpty renders "" as JSON null.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func omitEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if s, ok := v.(string); ok && s == "" {
			delete(m, k)
		}
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
