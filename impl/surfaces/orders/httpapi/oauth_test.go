package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/kit/web"
)

// TestOAuth_PasswordGrantWithRealClient logs in with golang.org/x/oauth2, the client sending its
// credentials once with HTTP Basic and once as form fields, and uses the token it gets.
func TestOAuth_PasswordGrantWithRealClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	e.register("alice", "alice-password", "Customer")
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, e.c)
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		conf := &oauth2.Config{ClientID: testClientID, ClientSecret: testClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: e.url + "/oauth/token", AuthStyle: style}}
		tok, err := conf.PasswordCredentialsToken(ctx, "alice", "alice-password")
		if err != nil {
			t.Fatalf("style %d: %v", style, err)
		}
		if tok.TokenType != "bearer" || tok.RefreshToken != "" || tok.AccessToken == "" {
			t.Fatalf("style %d: token %+v", style, tok)
		}
		if left := time.Until(tok.Expiry); left < 23*time.Hour || left > 24*time.Hour+time.Minute {
			t.Fatalf("style %d: token lives %v, want 24h", style, left)
		}
		// The client's token source sends it as Authorization: Bearer.
		c := conf.Client(ctx, tok)
		res, err := c.Get(e.url + "/authenticated")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"username":"alice"`) {
			t.Fatalf("style %d: /authenticated %d %s", style, res.StatusCode, b)
		}
	}

	// Wrong password through the real client surfaces the RFC error code.
	conf := &oauth2.Config{ClientID: testClientID, ClientSecret: testClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: e.url + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	_, err := conf.PasswordCredentialsToken(ctx, "alice", "wrong-password")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("wrong password: %v", err)
	}
}

// tokenCall posts to /oauth/token with query parameters, form fields and optional Basic credentials.
func (e *env) tokenCall(query, form url.Values, basicUser, basicPass string) resp {
	e.t.Helper()
	u := e.url + "/oauth/token"
	if query != nil {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest("POST", u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if basicUser != "" {
		req.SetBasicAuth(basicUser, basicPass)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func TestOAuth_TokenEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	e.register("alice", "alice-password", "Customer")
	full := func() url.Values {
		return url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
			"username": {"alice"}, "password": {"alice-password"}}
	}
	without := func(keys ...string) url.Values {
		v := full()
		for _, k := range keys {
			v.Del(k)
		}
		return v
	}

	// 200 with everything in the query, as the seed's clients send it.
	r := e.tokenCall(full(), nil, "", "")
	e.want(r, http.StatusOK)
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Refresh     string `json:"refresh_token"`
	}
	r.decode(t, &tok)
	if tok.TokenType != "bearer" || tok.ExpiresIn != 86400 || len(tok.AccessToken) < 43 || tok.Refresh != "" {
		t.Fatalf("token response: %s", r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control %q", r.header.Get("Cache-Control"))
	}
	// 200 with Basic client credentials and the rest in a form body.
	e.want(e.tokenCall(nil, without("client_id", "client_secret"), testClientID, testClientSecret), http.StatusOK)

	oauthErr := func(r resp) string {
		var body struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("not an RFC 6749 error body: %s", r.body)
		}
		return body.Error
	}
	cases := []struct {
		name        string
		query, form url.Values
		bu, bp      string
		status      int
		code        string
	}{
		{"wrong secret", func() url.Values { v := full(); v.Set("client_secret", "nope"); return v }(), nil, "", "", 401, "invalid_client"},
		{"unknown client", func() url.Values { v := full(); v.Set("client_id", "other"); return v }(), nil, "", "", 401, "invalid_client"},
		{"no client", without("client_id", "client_secret"), nil, "", "", 401, "invalid_client"},
		{"wrong basic", without("client_id", "client_secret"), nil, testClientID, "nope", 401, "invalid_client"},
		{"two client methods", full(), nil, testClientID, testClientSecret, 400, "invalid_request"},
		{"client credentials grant", func() url.Values { v := full(); v.Set("grant_type", "client_credentials"); return v }(), nil, "", "", 400, "unsupported_grant_type"},
		{"no grant type", without("grant_type"), nil, "", "", 400, "invalid_request"},
		{"no username", without("username"), nil, "", "", 400, "invalid_request"},
		{"no password", without("password"), nil, "", "", 400, "invalid_request"},
		{"repeated parameter", full(), url.Values{"username": {"alice"}}, "", "", 400, "invalid_request"},
		{"wrong password", func() url.Values { v := full(); v.Set("password", "wrong-password"); return v }(), nil, "", "", 400, "invalid_grant"},
		{"unknown user", func() url.Values { v := full(); v.Set("username", "nobody"); return v }(), nil, "", "", 400, "invalid_grant"},
		// A name no registration accepts (here with a NUL byte, which PostgreSQL text cannot hold)
		// is just another unknown user, not a server error.
		{"malformed username", func() url.Values { v := full(); v.Set("username", "ali\x00ce"); return v }(), nil, "", "", 400, "invalid_grant"},
	}
	bodies := map[string]string{}
	for _, tc := range cases {
		r := e.tokenCall(tc.query, tc.form, tc.bu, tc.bp)
		if r.status != tc.status || oauthErr(r) != tc.code {
			t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", tc.name, r.header.Get("Cache-Control"))
		}
		if tc.status == 401 && r.header.Get("WWW-Authenticate") != `Basic realm="orders"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, r.header.Get("WWW-Authenticate"))
		}
		bodies[tc.name] = string(r.body)
	}
	// An unknown user and a wrong password are indistinguishable.
	for _, other := range []string{"unknown user", "malformed username"} {
		if bodies["wrong password"] != bodies[other] {
			t.Errorf("%s %s differs from wrong password %s", other, bodies[other], bodies["wrong password"])
		}
	}
}

// TestOAuth_TokenBodyIsAFormOrNothing: the token request's fields come in a form body or, for
// the original API's clients, in the query with no body. Any other body is refused with 415 and
// the shared ApiError body, rather than read as if empty (which would blame a missing grant_type).
func TestOAuth_TokenBodyIsAFormOrNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	e.register("alice", "alice-password", "Customer")
	fields := url.Values{"grant_type": {"password"}, "client_id": {testClientID}, "client_secret": {testClientSecret},
		"username": {"alice"}, "password": {"alice-password"}}
	jsonBody := `{"grant_type":"password","client_id":"` + testClientID + `","client_secret":"` + testClientSecret +
		`","username":"alice","password":"alice-password"}`
	cases := []struct {
		name, query, ctype, body string
		status                   int
	}{
		{"form", "", "application/x-www-form-urlencoded", fields.Encode(), http.StatusOK},
		{"form with a charset", "", "application/x-www-form-urlencoded; charset=utf-8", fields.Encode(), http.StatusOK},
		{"query, no body", fields.Encode(), "", "", http.StatusOK},
		// A client library that always sets a Content-Type sends no body all the same.
		{"query, a JSON type but no body", fields.Encode(), "application/json", "", http.StatusOK},
		{"JSON body", "", "application/json", jsonBody, http.StatusUnsupportedMediaType},
		{"JSON body beside the query", fields.Encode(), "application/json", "{}", http.StatusUnsupportedMediaType},
		{"plain text", "", "text/plain", fields.Encode(), http.StatusUnsupportedMediaType},
		{"multipart", "", "multipart/form-data; boundary=x", "--x--\r\n", http.StatusUnsupportedMediaType},
		{"a body without a type", "", "", fields.Encode(), http.StatusUnsupportedMediaType},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := e.url + "/oauth/token"
			if tc.query != "" {
				target += "?" + tc.query
			}
			var body io.Reader = http.NoBody
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest("POST", target, body)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			res, err := e.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("got %d %s, want %d", res.StatusCode, b, tc.status)
			}
			if tc.status != http.StatusUnsupportedMediaType {
				return
			}
			var apiErr struct{ Code, Message string }
			if err := json.Unmarshal(b, &apiErr); err != nil || apiErr.Code != web.CodeUnsupportedMediaType ||
				apiErr.Message != web.MessageUnsupportedMedia {
				t.Fatalf("body %s, want the shared unsupported_media_type body", b)
			}
		})
	}
}
