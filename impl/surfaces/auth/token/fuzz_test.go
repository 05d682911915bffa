package token_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

const fuzzSecret = "fuzz-secret-0123456789abcdef"

func fuzzService() *token.Service {
	now := time.Unix(1_800_000_000, 0)
	return token.NewService(token.Opts{
		SecretReader: token.SecretFunc(func(string) (string, error) { return fuzzSecret, nil }),
		Now:          func() time.Time { return now },
	})
}

// FuzzParse feeds arbitrary strings to Parse, the first thing every authenticated request meets:
// it must refuse them without panicking, and accept only what carries a valid signature.
func FuzzParse(f *testing.F) {
	svc := fuzzService()
	valid, err := svc.Token(token.Claims{User: &token.User{Name: "n", ID: "p_1"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{valid, valid + "x", "a.b.c", "..", "eyJhbGciOiJub25lIn0.e30.", valid[:len(valid)-2]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := svc.Parse(tok); err == nil && tok != valid {
			// The only signed token the fuzzer knows is the seed; another one accepted means the
			// signature check let an altered token through (base64 padding bits aside).
			if signingInput(tok) != signingInput(valid) {
				t.Fatalf("accepted %q, which was never signed", tok)
			}
		}
	})
}

// FuzzParseClaims signs arbitrary payloads with the service's key, so the fuzzer reaches the
// claims decoder behind the signature check: it must never panic, and accepted claims must
// survive being signed and parsed again.
func FuzzParseClaims(f *testing.F) {
	for _, s := range []string{
		`{"user":{"name":"n","id":"p_1"},"exp":1900000000,"aud":["a"]}`,
		`{"aud":"x","exp":1.5e9,"nbf":-1e300,"iat":1e300}`,
		`{"aud":["a","b"]}`, `{"aud":[""]}`, `{"user":{"attrs":{"a":[1,{"b":null}]}}}`, `{"handshake":{"state":"s","from":"f"}}`,
		`[]`, `null`, `{"exp":"soon"}`,
	} {
		f.Add([]byte(s))
	}
	svc := fuzzService()
	f.Fuzz(func(t *testing.T, payload []byte) {
		tok := sign(`{"alg":"HS256","typ":"JWT"}`, payload)
		c, err := svc.Parse(tok)
		if err != nil {
			return
		}
		again, err := svc.Token(c)
		if err != nil {
			return // e.g. claims the service would not issue itself; refusing is fine
		}
		if _, err := svc.Parse(again); err != nil {
			t.Fatalf("claims of %q parsed, but re-signed they fail: %v", payload, err)
		}
	})
}

func sign(header string, payload []byte) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString(payload)
	m := hmac.New(sha256.New, []byte(fuzzSecret))
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signingInput is the part of a compact JWS the signature covers, decoded, so two encodings of
// the same bytes compare equal.
func signingInput(tok string) string {
	var parts [3]string
	n := 0
	start := 0
	for i := 0; i < len(tok) && n < 2; i++ {
		if tok[i] == '.' {
			parts[n] = tok[start:i]
			n++
			start = i + 1
		}
	}
	if n < 2 {
		return tok
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	return string(h) + "." + string(p)
}

// fastSeeds are payloads of the shapes the service issues (a session after a direct login, with
// attributes, a handshake, a confirmation, a go-pkgz/auth session) and near misses of each.
var fastSeeds = []string{
	`{"aud":["site"],"exp":1800000300,"jti":"Zm9vYmFyYmF6cXV4MTIzNA","iat":1800000000,"iss":"triad","user":{"name":"demo","id":"local_89e495e7941cf9e40e6980d14a16bf023ccd4c91","picture":"http://localhost/avatar/x.image","aud":"site","email":"demo@example.com","attrs":{"admin":true,"roles":["a","b"],"n":3,"s":"x"},"role":"editor"},"sess_only":true,"auth_time":1800000000,"auth_provider":{"name":"local"}}`,
	`{"aud":"site","exp":1800000300,"jti":"j","iat":1800000000,"iss":"go-pkgz/auth","user":{"name":"n","id":"github_1"},"auth_provider":{"name":"github"}}`,
	`{"exp":1800000900,"jti":"h","iat":1800000000,"iss":"triad","handshake":{"state":"s","from":"/x","verifier":"v","session":true,"provider":"dev"}}`,
	`{"handshake":{"id":"u::a@b.test","provider":"email"},"aud":["s"],"exp":1}`,
	` { "iss" : "i" , "user" : { } , "exp" : 0 } `,
	`{"user":{"name":"Zoë ☃","attrs":{}}}`,
	`{"iss":"a","iss":"b"}`, `{"ISS":"a"}`, `{"exp":1.5}`, `{"exp":1e3}`, `{"exp":-1}`, `{"exp":01}`,
	`{"exp":1234567890123456}`, `{"aud":["a","b"]}`, `{"aud":[]}`, `{"aud":null}`, `{"user":null}`,
	`{"iss":"a\"b"}`, `{"iss":"\u00e9"}`, "{\"iss\":\"\xff\"}", `{"user":{"attrs":{"a":1,"a":true}}}`,
	`{"user":{"attrs":{"a":[1]}}}`, `{"user":{"attrs":{"a":{"b":1}}}}`, `{"x":1}`, `{"iss":"a"} x`, `{"iss":"a",}`,
	`{"sess_only":truex}`, `{"sess_only":"true"}`, `{"auth_time":99}`, `{"auth_provider":{"name":"a","name":"b"}}`,
	`{"iss":"a\u003cb\n\/\"\\\t"}`, `{"iss":"\ud800\udc00"}`, `{"iss":"\u00"}`, `{"iss":"\x"}`, "{\"iss\":\"\xc3\\u00a9\"}",
	`[]`, `null`, ``, `{`, `{"iss":`, `{"handshake":{"session":false,"session":true}}`,
}

// FuzzFastClaims holds the fast claims decoder to encoding/json: whatever it decodes must be
// exactly what encoding/json makes of the same bytes (which must not be an error), to the last
// field, map and pointer. Declining (ok false) is always allowed; the caller then uses encoding/json.
func FuzzFastClaims(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := token.FastClaims(string(b))
		if !ok {
			return
		}
		want, err := token.DecodeClaims(b)
		if err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%q:\n fast %#v\n json %#v", b, fast, want)
		}
	})
}

// The claims the service issues take the fast decoder (else its speed is silently lost): a session
// with every user field and attribute kind, a session-only one, a handshake and a confirmation;
// and the seeds of those shapes do too.
func TestFastClaims_TakesWhatTheServiceIssues(t *testing.T) {
	svc := fuzzService()
	u := token.User{Name: "Zoë", ID: token.UserID("local", "z"), Picture: "http://x/avatar/a.image", Email: "z@example.com", IP: "ab", Role: "editor"}
	u.SetAdmin(true)
	u.SetSliceAttr("groups", []string{"a", "b"})
	u.SetStrAttr("s", "<&>")
	var toks []string
	for _, c := range []token.Claims{
		{User: &u, AuthProvider: &token.AuthProvider{Name: "local"}},
		{User: &token.User{Name: "n", ID: "p_1"}, SessionOnly: true},
	} {
		c.Audience = []string{"site"}
		c, err := svc.Set(httptest.NewRecorder(), c)
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := svc.Token(c)
		toks = append(toks, tok)
	}
	for _, h := range []token.Handshake{{State: "s", From: "/x", Verifier: "v", Session: true, Provider: "dev"}, {ID: "u::a@b.test", Provider: "email"}} {
		tok, err := svc.HandshakeToken("site", h)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, tok := range toks {
		p, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := token.FastClaims(string(p)); !ok {
			t.Errorf("issued claims %s take the slow decoder", p)
		}
	}
	for _, s := range fastSeeds[:6] {
		if _, ok := token.FastClaims(s); !ok {
			t.Errorf("seed %s takes the slow decoder", s)
		}
	}
}

// FuzzCookieValue holds the token's cookie scan to net/http's r.Cookie on arbitrary Cookie lines:
// the same value, or none for both.
func FuzzCookieValue(f *testing.F) {
	for _, s := range [][2]string{
		{"JWT=a.b.c; XSRF-TOKEN=x", ""}, {`JWT="a.b"`, ""}, {"JWT=a\"b; JWT=ok", ""}, {" JWT = v ", "JWT=w"},
		{"XSRF=1;;JWT=", "JWT=late"}, {"jwt=x", ""}, {`JWT="`, ""}, {"JWT=a b", ""}, {"JWT=\x7f;JWT=y", ""}, {"", ""},
		{strings.Repeat(";", 3000) + "JWT=x", ""}, {strings.Repeat(";", 2998) + "JWT=x", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, l1, l2 string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Cookie"] = []string{l1}
		if l2 != "" {
			r.Header["Cookie"] = append(r.Header["Cookie"], l2)
		}
		want := ""
		if ck, err := r.Cookie("JWT"); err == nil {
			want = ck.Value
		}
		if got := token.CookieValue(r, "JWT"); got != want {
			t.Fatalf("Cookie %q %q: scan %q, net/http %q", l1, l2, got, want)
		}
	})
}

// The cookie scan checks eight bytes at a time: every byte value at every place of a 17-byte value
// (two words and a tail) is judged as net/http judges it.
func TestCookieValue_EveryByteEveryPlace(t *testing.T) {
	for pos := range 17 {
		for c := range 256 {
			v := []byte("abcdefghijklmnopq")
			v[pos] = byte(c)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header["Cookie"] = []string{"JWT=" + string(v) + "x"}
			want := ""
			if ck, err := r.Cookie("JWT"); err == nil {
				want = ck.Value
			}
			if got := token.CookieValue(r, "JWT"); got != want {
				t.Fatalf("byte %#x at %d: scan %q, net/http %q", c, pos, got, want)
			}
		}
	}
}
