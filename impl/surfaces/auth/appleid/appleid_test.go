package appleid_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
)

func TestLoad_FileAndBytes(t *testing.T) {
	t.Parallel()
	p8, pub := providertest.GenerateP8(t)
	path := filepath.Join(t.TempDir(), "AuthKey.p8")
	if err := os.WriteFile(path, p8, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range []appleid.KeyLoader{appleid.LoadFromFile(path), appleid.LoadFromBytes(p8)} {
		k, err := appleid.Load(l)
		if err != nil {
			t.Fatal(err)
		}
		if !k.PublicKey.Equal(pub) {
			t.Fatal("loaded another key")
		}
	}
	for name, l := range map[string]appleid.KeyLoader{
		"missing file": appleid.LoadFromFile(filepath.Join(t.TempDir(), "none.p8")),
		"not pem":      appleid.LoadFromBytes("hello"),
		"nil":          nil,
	} {
		if _, err := appleid.Load(l); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestClientSecret_Claims(t *testing.T) {
	t.Parallel()
	p8, pub := providertest.GenerateP8(t)
	k, _ := appleid.Load(appleid.LoadFromBytes(p8))
	s, err := appleid.ClientSecret(k, "TEAM", "com.example.web", "KID1", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var c jwt.RegisteredClaims
	tok, err := jwt.ParseWithClaims(s, &c, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer("TEAM"), jwt.WithSubject("com.example.web"),
		jwt.WithAudience(appleid.Issuer), jwt.WithExpirationRequired())
	if err != nil {
		t.Fatal(err)
	}
	if tok.Header["kid"] != "KID1" {
		t.Fatalf("kid %v", tok.Header["kid"])
	}
}

// jwksServer serves one RSA key and counts fetches.
func jwksServer(t *testing.T, kid string, k *rsa.PublicKey) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		_ = json.NewEncoder(w).Encode(appleid.JWKS{Keys: []appleid.JWK{appleid.PublicJWK(kid, k)}})
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

func sign(t *testing.T, k *rsa.PrivateKey, kid string, m jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, m)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeySet_Verify(t *testing.T) {
	t.Parallel()
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	ts, fetches := jwksServer(t, "k1", &k.PublicKey)
	ks := &appleid.KeySet{URL: ts.URL, Client: outbound.New(outbound.Options{AllowPrivate: true})} // ts is on loopback
	ctx := context.Background()
	now := time.Now()
	good := jwt.MapClaims{"iss": appleid.Issuer, "aud": "cid", "sub": "s1", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix()}
	c, err := ks.Verify(ctx, sign(t, k, "k1", good), appleid.Issuer, "cid")
	if err != nil || c.Subject != "s1" {
		t.Fatalf("good token: %v %+v", err, c)
	}
	with := func(key, val string) jwt.MapClaims {
		m := jwt.MapClaims{}
		for a, b := range good {
			m[a] = b
		}
		if val == "" {
			delete(m, key)
		} else {
			m[key] = val
		}
		return m
	}
	expired := with("iss", appleid.Issuer)
	expired["exp"] = now.Add(-time.Hour).Unix()
	bad := map[string]string{
		"other key":   sign(t, other, "k1", good),
		"wrong iss":   sign(t, k, "k1", with("iss", "https://evil.example")),
		"wrong aud":   sign(t, k, "k1", with("aud", "someone-else")),
		"no sub":      sign(t, k, "k1", with("sub", "")),
		"expired":     sign(t, k, "k1", expired),
		"unknown kid": sign(t, k, "k9", good),
	}
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, good)
	hs.Header["kid"] = "k1"
	bad["hs256"], _ = hs.SignedString([]byte("secret"))
	for name, tok := range bad {
		if _, err := ks.Verify(ctx, tok, appleid.Issuer, "cid"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Keys are cached: the unknown kid refetches at most once per minRefetch.
	if n := fetches.Load(); n > 2 {
		t.Fatalf("%d key fetches, want at most 2", n)
	}
}
