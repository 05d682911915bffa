package providertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
)

// Apple is a fake of Sign in with Apple: GET /auth/authorize (answering, for response_mode
// form_post, the auto-submitting form Apple's page posts to the redirect URI, with the `user` JSON
// on the first sign-up only), POST /auth/token (checking the ES256 client-secret JWT and answering
// an RS256 id_token) and GET /auth/keys (the JWKS).
type Apple struct {
	ClientID, TeamID, KeyID string
	Server                  *httptest.Server

	clientKey *ecdsa.PublicKey
	signKey   *rsa.PrivateKey
	signKid   string

	mu      sync.Mutex
	profile Profile
	fail    Failures
	codes   map[string]pending
	seen    map[string]bool // subs that signed up already
}

// GenerateP8 makes a developer key in Apple's .p8 format (PKCS#8 PEM, EC P-256).
func GenerateP8(t testing.TB) ([]byte, *ecdsa.PublicKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), &k.PublicKey
}

// pending is a code the fake issued, waiting for its exchange.
type pending struct{ redirectURI string }

// NewApple starts the fake for one service (client) id, registered with the developer's public key.
func NewApple(t testing.TB, clientID, teamID, keyID string, clientKey *ecdsa.PublicKey) *Apple {
	t.Helper()
	sk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &Apple{ClientID: clientID, TeamID: teamID, KeyID: keyID, clientKey: clientKey, signKey: sk, signKid: "fake-" + randomHex(4),
		codes: map[string]pending{}, seen: map[string]bool{},
		profile: Profile{ID: "001234.abcdef0123456789.1234", Name: "Apple User", Email: "x1@privaterelay.appleid.com"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth/authorize", f.authorize)
	mux.HandleFunc("POST /auth/token", f.token)
	mux.HandleFunc("GET /auth/keys", f.keys)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Server.Close)
	return f
}

// AuthURL, TokenURL and KeysURL are the fake's endpoints; Issuer is the iss of its id_tokens.
func (f *Apple) AuthURL() string { return f.Server.URL + "/auth/authorize" }

// TokenURL is the token endpoint.
func (f *Apple) TokenURL() string { return f.Server.URL + "/auth/token" }

// KeysURL is the JWKS endpoint.
func (f *Apple) KeysURL() string { return f.Server.URL + "/auth/keys" }

// Issuer is the iss the fake puts in id_tokens (Apple's real issuer).
func (f *Apple) Issuer() string { return appleid.Issuer }

// SetProfile sets the account the next logins are for; a new ID is a first sign-up.
func (f *Apple) SetProfile(p Profile) { f.mu.Lock(); f.profile = p; f.mu.Unlock() }

// Fail switches failures on; Info makes the id_token badly signed, InfoNoID drops its sub.
func (f *Apple) Fail(x Failures) { f.mu.Lock(); f.fail = x; f.mu.Unlock() }

func (f *Apple) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != f.ClientID || q.Get("redirect_uri") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client"})
		return
	}
	if q.Get("scope") != "" && q.Get("response_mode") != "form_post" {
		// Apple's rule: requesting name or email requires form_post.
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f.mu.Lock()
	fail, p := f.fail, f.profile
	first := !f.seen[p.ID]
	f.mu.Unlock()
	out := url.Values{"state": {q.Get("state")}}
	if fail.Deny {
		out.Set("error", "user_cancelled_authorize")
	} else {
		code := "c" + randomHex(16)
		f.mu.Lock()
		f.codes[code] = pending{redirectURI: q.Get("redirect_uri")}
		f.seen[p.ID] = true
		f.mu.Unlock()
		out.Set("code", code)
		if first && strings.Contains(q.Get("scope"), "name") {
			first, last, _ := strings.Cut(p.Name, " ")
			u, _ := json.Marshal(map[string]any{"name": map[string]string{"firstName": first, "lastName": last}, "email": p.Email})
			out.Set("user", string(u))
		}
	}
	if q.Get("response_mode") != "form_post" {
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+out.Encode(), http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	fmt.Fprintf(&b, `<html><body onload="document.forms[0].submit()"><form method="post" action="%s">`, html.EscapeString(q.Get("redirect_uri")))
	for k := range out {
		fmt.Fprintf(&b, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(out.Get(k)))
	}
	b.WriteString(`</form></body></html>`)
	_, _ = io.WriteString(w, b.String())
}

var formRe = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
var inputRe = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// SubmitFormPost does what the browser's onload script does with a form_post page: it posts the
// hidden fields of resp's HTML form to its action with client, and returns the answer.
func SubmitFormPost(client *http.Client, resp *http.Response) (*http.Response, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	m := formRe.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("providertest: no form_post form in %d answer: %.200s", resp.StatusCode, body)
	}
	v := url.Values{}
	for _, in := range inputRe.FindAllSubmatch(body, -1) {
		v.Set(html.UnescapeString(string(in[1])), html.UnescapeString(string(in[2])))
	}
	return client.PostForm(html.UnescapeString(string(m[1])), v)
}

func (f *Apple) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	// The client secret must be an ES256 JWT signed by the registered key: iss team, sub client.
	var c jwt.RegisteredClaims
	tok, err := jwt.ParseWithClaims(r.PostForm.Get("client_secret"), &c, func(t *jwt.Token) (any, error) {
		if t.Header["kid"] != f.KeyID {
			return nil, fmt.Errorf("unknown kid")
		}
		return f.clientKey, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(f.TeamID), jwt.WithSubject(f.ClientID),
		jwt.WithAudience(appleid.Issuer), jwt.WithExpirationRequired())
	if err != nil || !tok.Valid || r.PostForm.Get("client_id") != f.ClientID {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client"})
		return
	}
	code := r.PostForm.Get("code")
	f.mu.Lock()
	p, ok := f.codes[code]
	delete(f.codes, code)
	fail, prof := f.fail, f.profile
	f.mu.Unlock()
	if r.PostForm.Get("grant_type") != "authorization_code" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if !ok || fail.Token || p.redirectURI != r.PostForm.Get("redirect_uri") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims := jwt.MapClaims{"iss": appleid.Issuer, "aud": f.ClientID, "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
		"sub": prof.ID, "email": prof.Email, "email_verified": "true", "auth_time": now.Unix()}
	if fail.InfoNoID {
		delete(claims, "sub")
	}
	idt := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	idt.Header["kid"] = f.signKid
	key := f.signKey
	if fail.Info {
		key, _ = rsa.GenerateKey(rand.Reader, 2048) // a forger's key: the signature will not verify
	}
	signed, err := idt.SignedString(key)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "a" + randomHex(16), "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": "r" + randomHex(16), "id_token": signed})
}

func (f *Apple) keys(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, appleid.JWKS{Keys: []appleid.JWK{appleid.PublicJWK(f.signKid, &f.signKey.PublicKey)}})
}
