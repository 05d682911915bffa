package token_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

func newSvc(now *time.Time, mod func(*token.Opts)) *token.Service {
	o := token.Opts{
		SecretReader: token.SecretFunc(func(aud string) (string, error) {
			if aud == "nosecret" {
				return "", nil
			}
			return "secret-0123456789abcdef-" + aud, nil
		}),
		Issuer: "iss",
		Now:    func() time.Time { return *now },
	}
	if mod != nil {
		mod(&o)
	}
	return token.NewService(o)
}

func userClaims(aud string) token.Claims {
	c := token.Claims{User: &token.User{Name: "n", ID: "p_1"}}
	if aud != "" {
		c.Audience = jwt.ClaimStrings{aud}
	}
	return c
}

func TestJWT_Defaults(t *testing.T) {
	s := token.NewService(token.Opts{})
	if s.TokenDuration != 15*time.Minute || s.CookieDuration != 31*24*time.Hour || s.JWTCookieName != "JWT" ||
		s.XSRFCookieName != "XSRF-TOKEN" || s.XSRFHeaderKey != "X-XSRF-TOKEN" || s.JWTHeaderKey != "X-JWT" || s.JWTQuery != "token" ||
		s.SameSite != http.SameSiteLaxMode {
		t.Fatalf("defaults %+v", s.Opts)
	}
}

func TestJWT_SetThenGetRoundTrip(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	w := httptest.NewRecorder()
	c, err := s.Set(w, userClaims("site"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.Issuer != "iss" || c.ExpiresAt.Sub(now) > 15*time.Minute || c.AuthTime != now.Unix() || c.User.Audience != "site" {
		t.Fatalf("claims %+v", c)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, ck := range w.Result().Cookies() {
		r.AddCookie(ck)
	}
	r.Header.Set("X-XSRF-TOKEN", c.ID)
	got, tok, err := s.Get(r)
	if err != nil || got.User.Name != "n" || tok == "" {
		t.Fatalf("get: %v %+v", err, got)
	}
}

func TestJWT_ExpiryAndRefreshWindow(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, func(o *token.Opts) { o.CookieDuration = time.Hour })
	w := httptest.NewRecorder()
	c, _ := s.Set(w, userClaims(""))
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, ck := range w.Result().Cookies() {
			r.AddCookie(ck)
		}
		r.Header.Set("X-XSRF-TOKEN", c.ID)
		return r
	}
	now = now.Add(20 * time.Minute)
	got, _, err := s.Get(req())
	if !errors.Is(err, token.ErrExpired) || got.ID != c.ID {
		t.Fatalf("within cookie lifetime: %v %+v", err, got)
	}
	now = now.Add(time.Hour)
	if _, _, err := s.Get(req()); errors.Is(err, token.ErrExpired) || err == nil {
		t.Fatalf("past cookie lifetime: %v", err)
	}
}

func TestJWT_RejectsAlgorithms(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	c := userClaims("")
	c.Issuer = "iss"
	c.ExpiresAt = jwt.NewNumericDate(now.Add(time.Minute))
	key := []byte("secret-0123456789abcdef-")
	for _, m := range []jwt.SigningMethod{jwt.SigningMethodHS384, jwt.SigningMethodHS512} {
		tok, _ := jwt.NewWithClaims(m, c).SignedString(key)
		if _, err := s.Parse(tok); !errors.Is(err, token.ErrInvalid) {
			t.Errorf("%s accepted: %v", m.Alg(), err)
		}
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := s.Parse(none); !errors.Is(err, token.ErrInvalid) {
		t.Errorf("none accepted: %v", err)
	}
	good, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
	if _, err := s.Parse(good); err != nil {
		t.Errorf("HS256 refused: %v", err)
	}
}

func TestJWT_AudienceAndSecret(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, func(o *token.Opts) { o.Audiences = []string{"a"} })
	if _, err := s.Token(userClaims("b")); !errors.Is(err, token.ErrAudience) {
		t.Fatalf("alien aud: %v", err)
	}
	s2 := newSvc(&now, nil)
	if _, err := s2.Token(userClaims("nosecret")); !errors.Is(err, token.ErrSecret) {
		t.Fatalf("empty secret: %v", err)
	}
}

func TestJWT_HandshakeIsNotASession(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	hs, err := s.HandshakeToken("", token.Handshake{State: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.ParseHandshake(hs)
	if err != nil || c.Handshake.State != "x" || c.User != nil {
		t.Fatalf("handshake %v %+v", err, c)
	}
	w := httptest.NewRecorder()
	full, _ := s.Set(w, userClaims(""))
	tok, _ := s.Token(full)
	if _, err := s.ParseHandshake(tok); err == nil {
		t.Fatal("a session token passed as a handshake")
	}
	now = now.Add(16 * time.Minute)
	if _, err := s.ParseHandshake(hs); err == nil {
		t.Fatal("expired handshake accepted")
	}
}

func TestJWT_UserAttributes(t *testing.T) {
	var u token.User
	u.SetBoolAttr("b", true)
	u.SetStrAttr("s", "v")
	u.SetSliceAttr("l", []string{"x", "y"})
	if !u.BoolAttr("b") || u.StrAttr("s") != "v" || len(u.SliceAttr("l")) != 2 || u.StrAttr("b") != "" || u.IsAdmin() {
		t.Fatalf("%+v", u)
	}
	u.SetAdmin(true)
	if !u.IsAdmin() {
		t.Fatal("admin")
	}
	if (token.User{ID: token.UserID("my_custom", "1")}).Provider() != "my_custom" {
		t.Fatal("provider of id")
	}
}

func TestJWT_DecodeMatchesRegisteredClaims(t *testing.T) {
	for _, payload := range []string{
		`{"iss":"i","sub":"s","aud":["a"],"exp":1700000000,"nbf":1600000000.5,"iat":1650000000,"jti":"j","user":{"name":"n","id":"p_1","attrs":{"k":true}},"sess_only":true,"auth_time":5}`,
		`{"aud":"single","exp":1700000000}`,
		`{"aud":["x","y"],"exp":1.7e9}`,
		`{"aud":["with \"quote\""],"exp":1700000000}`,
		`{"aud":null}`,
		`{}`,
	} {
		got, err := token.DecodeClaims([]byte(payload))
		if err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
		var want jwt.RegisteredClaims
		if err := json.Unmarshal([]byte(payload), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.RegisteredClaims, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", payload, got.RegisteredClaims, want)
		}
	}
	if _, err := token.DecodeClaims([]byte(`{"aud":[1]}`)); err == nil {
		t.Fatal("numeric aud accepted")
	}
}

func TestJWT_NotBeforeInTheFutureIsRefused(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	key := []byte("secret-0123456789abcdef-")
	tests := []struct {
		name string
		nbf  *jwt.NumericDate
		ok   bool
	}{
		{"no nbf", nil, true},
		{"nbf passed", jwt.NewNumericDate(now.Add(-time.Minute)), true},
		{"nbf now", jwt.NewNumericDate(now), true},
		{"nbf within the leeway", jwt.NewNumericDate(now.Add(token.NotBeforeLeeway - time.Second)), true},
		{"nbf past the leeway", jwt.NewNumericDate(now.Add(token.NotBeforeLeeway + 2*time.Second)), false},
		{"nbf in an hour", jwt.NewNumericDate(now.Add(time.Hour)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := userClaims("")
			c.Issuer, c.ID = "iss", "id-1"
			c.ExpiresAt = jwt.NewNumericDate(now.Add(2 * time.Hour))
			c.NotBefore = tt.nbf
			tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Parse(tok)
			if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, token.ErrInvalid)) {
				t.Fatalf("parse: %v, want ok=%v", err, tt.ok)
			}
			// Each transport refuses it too: header, query, and the cookie (not offered for refresh).
			hr := httptest.NewRequest(http.MethodGet, "/", nil)
			hr.Header.Set("X-JWT", tok)
			qr := httptest.NewRequest(http.MethodGet, "/?token="+tok, nil)
			cr := httptest.NewRequest(http.MethodGet, "/", nil)
			cr.AddCookie(&http.Cookie{Name: "JWT", Value: tok})
			cr.Header.Set("X-XSRF-TOKEN", "id-1")
			for name, r := range map[string]*http.Request{"header": hr, "query": qr, "cookie": cr} {
				_, _, err := s.Get(r)
				if tt.ok != (err == nil) || errors.Is(err, token.ErrExpired) {
					t.Errorf("%s: %v, want ok=%v", name, err, tt.ok)
				}
			}
		})
	}
}

// A JWS whose header lists critical extensions must be refused unless every one is understood
// (RFC 7515 §4.1.11); this package understands none, so any crit is refused, even one naming a
// registered claim, an empty list or null, with a good signature and every claim in order.
func TestJWT_CritHeaderIsRefused(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	c := userClaims("")
	c.Issuer, c.ID = "iss", "id-1"
	c.ExpiresAt = jwt.NewNumericDate(now.Add(time.Hour))
	key := []byte("secret-0123456789abcdef-")
	for _, crit := range []any{[]string{"exp"}, []string{"b64"}, []string{"x-unknown"}, []string{}, nil} {
		tk := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
		tk.Header["crit"] = crit
		if l, ok := crit.([]string); ok && len(l) == 1 {
			tk.Header[l[0]] = false
		}
		tok, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Parse(tok); !errors.Is(err, token.ErrInvalid) {
			t.Errorf("crit %v: %v, want ErrInvalid", crit, err)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-JWT", tok)
		if _, _, err := s.Get(r); err == nil {
			t.Errorf("crit %v accepted through X-JWT", crit)
		}
	}
	// The same claims without crit, with another unregistered header, are accepted: the refusal is
	// about crit, not about an unusual header.
	tk := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tk.Header["kid"] = "k1"
	tok, _ := tk.SignedString(key)
	if _, err := s.Parse(tok); err != nil {
		t.Fatalf("header with kid refused: %v", err)
	}
}

// Token signs with a MAC keyed once per secret; its tokens are byte for byte what golang-jwt's
// SignedString makes of the same claims, for every secret of several audiences and across reuse.
func TestJWT_TokenIsGolangJWTs(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	u := token.User{Name: "a<b&c", ID: "p_1", Email: "e@x"}
	u.SetAdmin(true)
	for i := range 3 {
		for _, aud := range []string{"a", "b", ""} {
			c := userClaims(aud)
			c.User = &u
			c.ID, c.Issuer, c.AuthTime = token.NewID(), "iss", int64(i)
			c.ExpiresAt = jwt.NewNumericDate(now.Add(time.Minute))
			got, err := s.Token(c)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte("secret-0123456789abcdef-" + aud))
			if got != want {
				t.Fatalf("aud %q:\n got %s\nwant %s", aud, got, want)
			}
			if back, err := s.Parse(got); err != nil || !reflect.DeepEqual(back.User, c.User) {
				t.Fatalf("parse back: %v %+v", err, back.User)
			}
		}
	}
}

// The keyed MAC states are shared between requests: tokens signed and verified at once from many
// goroutines, under many secrets (more than the pools kept per secret, so some are keyed per use),
// each verify with its own secret and refuse another's.
func TestJWT_ParallelSignAndVerifyAcrossSecrets(t *testing.T) {
	now := time.Now()
	s := newSvc(&now, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				aud := fmt.Sprintf("site-%d", (g*40+i)%100)
				c := userClaims(aud)
				c.ExpiresAt, c.Issuer = jwt.NewNumericDate(now.Add(time.Minute)), "iss"
				tok, err := s.Token(c)
				if err != nil {
					t.Error(err)
					return
				}
				if back, err := s.Parse(tok); err != nil || back.Aud() != aud {
					t.Errorf("%s: %v %q", aud, err, back.Aud())
					return
				}
				forged := c
				forged.Audience = jwt.ClaimStrings{aud + "x"}
				other, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, forged).SignedString([]byte("secret-0123456789abcdef-" + aud))
				if _, err := s.Parse(other); !errors.Is(err, token.ErrInvalid) {
					t.Errorf("token for %sx signed with %s's secret: %v", aud, aud, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
