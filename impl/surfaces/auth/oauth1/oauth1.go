// Package oauth1 is an OAuth 1.0a client (RFC 5849, HMAC-SHA1 signatures) for the three-legged
// flow Twitter/X still uses for "Sign in with Twitter": request token → user authorization →
// access token, and signed API calls with the access token. It also exports the signature
// primitives so a test server can verify requests the same way the real provider does.
package oauth1

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
)

// Config describes the provider's endpoints and the client's credentials.
type Config struct {
	// ConsumerKey and ConsumerSecret identify the application (Twitter's "API key and secret").
	ConsumerKey, ConsumerSecret string
	// RequestTokenURL, AuthorizeURL and AccessTokenURL are the provider's three endpoints.
	RequestTokenURL, AuthorizeURL, AccessTokenURL string
	// CallbackURL is where the provider sends the user back with oauth_token and oauth_verifier.
	CallbackURL string
	// HTTPClient makes the server-to-server calls; nil uses the guarded client of package outbound
	// (public addresses only; tests on loopback pass one with AllowPrivate).
	HTTPClient *http.Client
	// Now and Nonce are overridable for tests; nil uses the clock and 16 random bytes.
	Now   func() time.Time
	Nonce func() string
}

// Credentials are a token and its secret (temporary or access).
type Credentials struct {
	Token, Secret string
}

// ErrCallbackNotConfirmed is returned when the provider does not confirm the callback URL, which
// RFC 5849 §2.1 requires of 1.0a servers (it defends against session fixation).
var ErrCallbackNotConfirmed = errors.New("oauth1: provider did not confirm the callback")

// defaultClient is the guarded client of package outbound; the server-to-server calls of OAuth 1.0a
// have no protocol reason to redirect, so redirects are refused.
var defaultClient = outbound.New(outbound.Options{})

func (c *Config) client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return defaultClient
}

// RequestToken obtains temporary credentials (RFC 5849 §2.1).
func (c *Config) RequestToken(ctx context.Context) (Credentials, error) {
	v, err := c.post(ctx, c.RequestTokenURL, Credentials{}, map[string]string{"oauth_callback": c.CallbackURL})
	if err != nil {
		return Credentials{}, err
	}
	if v.Get("oauth_callback_confirmed") != "true" {
		return Credentials{}, ErrCallbackNotConfirmed
	}
	cr := Credentials{Token: v.Get("oauth_token"), Secret: v.Get("oauth_token_secret")}
	if cr.Token == "" || cr.Secret == "" {
		return Credentials{}, errors.New("oauth1: request token response lacks the token")
	}
	return cr, nil
}

// AuthorizationURL is where the user is sent to approve the temporary credentials (§2.2).
func (c *Config) AuthorizationURL(temp Credentials) string {
	sep := "?"
	if strings.Contains(c.AuthorizeURL, "?") {
		sep = "&"
	}
	return c.AuthorizeURL + sep + url.Values{"oauth_token": {temp.Token}}.Encode()
}

// AccessToken exchanges approved temporary credentials and the verifier for token credentials
// (§2.3). The extra values of the response (e.g. Twitter's user_id and screen_name) are returned too.
func (c *Config) AccessToken(ctx context.Context, temp Credentials, verifier string) (Credentials, url.Values, error) {
	v, err := c.post(ctx, c.AccessTokenURL, temp, map[string]string{"oauth_verifier": verifier})
	if err != nil {
		return Credentials{}, nil, err
	}
	cr := Credentials{Token: v.Get("oauth_token"), Secret: v.Get("oauth_token_secret")}
	if cr.Token == "" || cr.Secret == "" {
		return Credentials{}, nil, errors.New("oauth1: access token response lacks the token")
	}
	return cr, v, nil
}

// Get makes a GET request to rawURL signed with the token credentials.
func (c *Config) Get(ctx context.Context, rawURL string, tok Credentials) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", c.authorization(http.MethodGet, req.URL, nil, tok, nil))
	return c.client().Do(req)
}

// post sends a signed, empty-bodied POST and parses the form-encoded answer.
func (c *Config) post(ctx context.Context, rawURL string, tok Credentials, extra map[string]string) (url.Values, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", c.authorization(http.MethodPost, req.URL, nil, tok, extra))
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth1: %s answered %d", req.URL.Path, resp.StatusCode)
	}
	return url.ParseQuery(string(body))
}

// authorization builds the Authorization header of a request (§3.5.1).
func (c *Config) authorization(method string, u *url.URL, form url.Values, tok Credentials, extra map[string]string) string {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	nonce := newNonce
	if c.Nonce != nil {
		nonce = c.Nonce
	}
	p := map[string]string{
		"oauth_consumer_key":     c.ConsumerKey,
		"oauth_nonce":            nonce(),
		"oauth_signature_method": "HMAC-SHA1",
		"oauth_timestamp":        strconv.FormatInt(now().Unix(), 10),
		"oauth_version":          "1.0",
	}
	if tok.Token != "" {
		p["oauth_token"] = tok.Token
	}
	for k, v := range extra {
		p[k] = v
	}
	all := url.Values{}
	for k, v := range p {
		all.Set(k, v)
	}
	p["oauth_signature"] = Signature(method, u, all, form, c.ConsumerSecret, tok.Secret)
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, Escape(k)+`="`+Escape(p[k])+`"`)
	}
	return "OAuth " + strings.Join(parts, ", ")
}

// Signature computes the HMAC-SHA1 signature (§3.4.2) of a request: oauthParams are the protocol
// parameters (without oauth_signature), form the x-www-form-urlencoded body parameters, if any.
// The query parameters are taken from u.
func Signature(method string, u *url.URL, oauthParams, form url.Values, consumerSecret, tokenSecret string) string {
	key := Escape(consumerSecret) + "&" + Escape(tokenSecret)
	mac := hmac.New(sha1.New, []byte(key))
	mac.Write([]byte(BaseString(method, u, oauthParams, form)))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// BaseString is the signature base string of §3.4.1.
func BaseString(method string, u *url.URL, oauthParams, form url.Values) string {
	type pair struct{ k, v string }
	var pairs []pair
	add := func(vs url.Values) {
		for k, list := range vs {
			if k == "oauth_signature" {
				continue
			}
			for _, v := range list {
				pairs = append(pairs, pair{Escape(k), Escape(v)})
			}
		}
	}
	add(u.Query())
	add(oauthParams)
	add(form)
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	norm := make([]string, len(pairs))
	for i, p := range pairs {
		norm[i] = p.k + "=" + p.v
	}
	return strings.ToUpper(method) + "&" + Escape(baseURI(u)) + "&" + Escape(strings.Join(norm, "&"))
}

// baseURI is §3.4.1.2: lower-case scheme and host, default ports dropped, no query or fragment.
func baseURI(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path
}

// Escape percent-encodes s as §3.6 requires: everything but ALPHA, DIGIT, '-', '.', '_', '~'.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// ParseAuthorization parses an "OAuth k="v", ..." header into its parameters (§3.5.1).
func ParseAuthorization(h string) (url.Values, error) {
	rest, ok := strings.CutPrefix(h, "OAuth ")
	if !ok {
		return nil, errors.New("oauth1: not an OAuth authorization header")
	}
	out := url.Values{}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return nil, fmt.Errorf("oauth1: malformed parameter %q", part)
		}
		ku, err1 := url.PathUnescape(k)
		vu, err2 := url.PathUnescape(v[1 : len(v)-1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("oauth1: malformed parameter %q", part)
		}
		out.Set(ku, vu)
	}
	return out, nil
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
