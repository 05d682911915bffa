package providertest

import (
	"crypto/subtle"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/oauth1"
)

// Twitter is a fake of Twitter's OAuth 1.0a sign-in: POST /oauth/request_token, GET
// /oauth/authenticate, POST /oauth/access_token and GET /1.1/account/verify_credentials.json, each
// checking the HMAC-SHA1 signature of the request as the real API does.
type Twitter struct {
	ConsumerKey, ConsumerSecret string
	Server                      *httptest.Server

	mu      sync.Mutex
	profile Profile
	fail    Failures
	temp    map[string]tempToken // by request token
	access  map[string]string    // access token -> secret
}

type tempToken struct {
	secret, callback, verifier string
}

// NewTwitter starts the fake for one consumer key/secret.
func NewTwitter(t testing.TB, consumerKey, consumerSecret string) *Twitter {
	t.Helper()
	f := &Twitter{ConsumerKey: consumerKey, ConsumerSecret: consumerSecret,
		temp: map[string]tempToken{}, access: map[string]string{},
		profile: Profile{ID: "783214", Name: "Twitter User", Login: "twitteruser", Picture: ""}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/request_token", f.requestToken)
	mux.HandleFunc("GET /oauth/authenticate", f.authenticate)
	mux.HandleFunc("POST /oauth/access_token", f.accessToken)
	mux.HandleFunc("GET /1.1/account/verify_credentials.json", f.verifyCredentials)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Server.Close)
	return f
}

// RequestTokenURL, AuthorizeURL, AccessTokenURL and InfoURL are the fake's endpoints.
func (f *Twitter) RequestTokenURL() string { return f.Server.URL + "/oauth/request_token" }

// AuthorizeURL is the user-facing authorization endpoint.
func (f *Twitter) AuthorizeURL() string { return f.Server.URL + "/oauth/authenticate" }

// AccessTokenURL is the access-token endpoint.
func (f *Twitter) AccessTokenURL() string { return f.Server.URL + "/oauth/access_token" }

// InfoURL is the verify-credentials endpoint.
func (f *Twitter) InfoURL() string { return f.Server.URL + "/1.1/account/verify_credentials.json" }

// SetProfile sets the account the next logins are for.
func (f *Twitter) SetProfile(p Profile) { f.mu.Lock(); f.profile = p; f.mu.Unlock() }

// Fail switches failures on (or off with the zero value).
func (f *Twitter) Fail(x Failures) { f.mu.Lock(); f.fail = x; f.mu.Unlock() }

// verify checks the request's OAuth signature with the given token secret and returns its
// protocol parameters, or writes a 401 and returns nil.
func (f *Twitter) verify(w http.ResponseWriter, r *http.Request, tokenSecret func(token string) (string, bool)) url.Values {
	p, err := oauth1.ParseAuthorization(r.Header.Get("Authorization"))
	if err != nil || p.Get("oauth_consumer_key") != f.ConsumerKey || p.Get("oauth_signature_method") != "HMAC-SHA1" {
		twitterError(w, http.StatusUnauthorized, 32, "Could not authenticate you.")
		return nil
	}
	secret, ok := tokenSecret(p.Get("oauth_token"))
	if !ok {
		twitterError(w, http.StatusUnauthorized, 89, "Invalid or expired token.")
		return nil
	}
	_ = r.ParseForm()
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	want := oauth1.Signature(r.Method, u, p, r.PostForm, f.ConsumerSecret, secret)
	if subtle.ConstantTimeCompare([]byte(want), []byte(p.Get("oauth_signature"))) != 1 {
		twitterError(w, http.StatusUnauthorized, 32, "Could not authenticate you.")
		return nil
	}
	return p
}

func (f *Twitter) requestToken(w http.ResponseWriter, r *http.Request) {
	p := f.verify(w, r, func(string) (string, bool) { return "", true })
	if p == nil {
		return
	}
	cb := p.Get("oauth_callback")
	if cb == "" {
		twitterError(w, http.StatusBadRequest, 417, "Desktop applications only support the oauth_callback value 'oob'")
		return
	}
	tok, secret := randomHex(16), randomHex(16)
	f.mu.Lock()
	f.temp[tok] = tempToken{secret: secret, callback: cb}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8") // what Twitter sends for this form body
	_, _ = w.Write([]byte(url.Values{"oauth_token": {tok}, "oauth_token_secret": {secret}, "oauth_callback_confirmed": {"true"}}.Encode()))
}

func (f *Twitter) authenticate(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("oauth_token")
	f.mu.Lock()
	tt, ok := f.temp[tok]
	deny := f.fail.Deny
	if ok && !deny {
		tt.verifier = randomHex(16)
		f.temp[tok] = tt
	}
	f.mu.Unlock()
	if !ok {
		http.Error(w, "This page is no longer valid.", http.StatusForbidden)
		return
	}
	if deny {
		// Twitter reports a cancelled sign-in as ?denied=<request token>.
		http.Redirect(w, r, tt.callback+"?"+url.Values{"denied": {tok}}.Encode(), http.StatusFound)
		return
	}
	http.Redirect(w, r, tt.callback+"?"+url.Values{"oauth_token": {tok}, "oauth_verifier": {tt.verifier}}.Encode(), http.StatusFound)
}

func (f *Twitter) accessToken(w http.ResponseWriter, r *http.Request) {
	var tt tempToken
	p := f.verify(w, r, func(tok string) (string, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, ok := f.temp[tok]
		tt = t
		return t.secret, ok
	})
	if p == nil {
		return
	}
	f.mu.Lock()
	delete(f.temp, p.Get("oauth_token")) // one use only
	fail, prof := f.fail.Token, f.profile
	f.mu.Unlock()
	if fail || tt.verifier == "" || p.Get("oauth_verifier") != tt.verifier {
		twitterError(w, http.StatusUnauthorized, 89, "Invalid or expired token.")
		return
	}
	tok, secret := prof.ID+"-"+randomHex(12), randomHex(16)
	f.mu.Lock()
	f.access[tok] = secret
	f.mu.Unlock()
	_, _ = w.Write([]byte(url.Values{"oauth_token": {tok}, "oauth_token_secret": {secret},
		"user_id": {prof.ID}, "screen_name": {prof.Login}}.Encode()))
}

func (f *Twitter) verifyCredentials(w http.ResponseWriter, r *http.Request) {
	p := f.verify(w, r, func(tok string) (string, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		s, ok := f.access[tok]
		return s, ok
	})
	if p == nil {
		return
	}
	f.mu.Lock()
	fail, prof := f.fail, f.profile
	f.mu.Unlock()
	if fail.Info {
		twitterError(w, http.StatusInternalServerError, 131, "Internal error")
		return
	}
	out := map[string]any{"name": prof.Name, "screen_name": prof.Login, "profile_image_url_https": prof.Picture}
	if !fail.InfoNoID {
		out["id_str"] = prof.ID
		out["id"] = jsonNumber(prof.ID)
	}
	writeJSON(w, http.StatusOK, out)
}

func twitterError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]any{{"code": code, "message": msg}}})
}
