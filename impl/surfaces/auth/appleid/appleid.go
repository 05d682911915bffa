// Package appleid holds the cryptography of "Sign in with Apple": loading the developer's private
// key (the .p8 file, a PKCS#8 PEM EC P-256 key), signing the client-secret JWT Apple requires in
// place of a static client secret (ES256), and verifying the id_token Apple returns against Apple's
// published JSON Web Key Set (RS256), with iss, aud and exp checked.
package appleid

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/kit/outbound"
)

// Apple's production endpoints and the issuer of its id_tokens.
const (
	Issuer   = "https://appleid.apple.com"
	AuthURL  = "https://appleid.apple.com/auth/authorize"
	TokenURL = "https://appleid.apple.com/auth/token"
	KeysURL  = "https://appleid.apple.com/auth/keys"
)

// KeyLoader supplies the PEM bytes of the private key.
type KeyLoader interface {
	LoadPrivateKey() ([]byte, error)
}

// LoadFromFile is a KeyLoader reading a .p8 file at the given path.
type LoadFromFile string

// LoadPrivateKey reads the file.
func (f LoadFromFile) LoadPrivateKey() ([]byte, error) { return os.ReadFile(string(f)) }

// LoadFromBytes is a KeyLoader holding the PEM bytes themselves (e.g. from a secret store).
type LoadFromBytes []byte

// LoadPrivateKey returns the bytes.
func (b LoadFromBytes) LoadPrivateKey() ([]byte, error) { return []byte(b), nil }

// ParsePrivateKey parses a PKCS#8 PEM EC P-256 private key, the format Apple issues.
func ParsePrivateKey(pemBytes []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("appleid: private key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("appleid: private key is not PKCS#8: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("appleid: private key is not an EC P-256 key")
	}
	return ek, nil
}

// Load runs the loader and parses its key.
func Load(l KeyLoader) (*ecdsa.PrivateKey, error) {
	if l == nil {
		return nil, errors.New("appleid: no private key loader")
	}
	b, err := l.LoadPrivateKey()
	if err != nil {
		return nil, fmt.Errorf("appleid: loading private key: %w", err)
	}
	return ParsePrivateKey(b)
}

// MaxSecretTTL is the longest life Apple accepts for a client secret (six months).
const MaxSecretTTL = 180 * 24 * time.Hour

// ClientSecret signs the client-secret JWT: iss = team id, sub = client (services) id,
// aud = Apple, header kid = key id, ES256.
func ClientSecret(key *ecdsa.PrivateKey, teamID, clientID, keyID string, now time.Time, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxSecretTTL {
		ttl = 5 * time.Minute
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.RegisteredClaims{
		Issuer:    teamID,
		Subject:   clientID,
		Audience:  jwt.ClaimStrings{Issuer},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	})
	t.Header["kid"] = keyID
	return t.SignedString(key)
}

// IDClaims are the id_token claims the login needs.
type IDClaims struct {
	jwt.RegisteredClaims
	Email         string `json:"email,omitempty"`
	EmailVerified any    `json:"email_verified,omitempty"` // Apple sends "true" or true
	Nonce         string `json:"nonce,omitempty"`
}

// JWK is one key of a JSON Web Key Set (RSA only: Apple signs id_tokens with RS256).
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// JWKS is a JSON Web Key Set document.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicJWK renders an RSA public key as a JWK.
func PublicJWK(kid string, k *rsa.PublicKey) JWK {
	return JWK{Kty: "RSA", Kid: kid, Use: "sig", Alg: "RS256",
		N: base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
		E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
}

func (j JWK) rsa() (*rsa.PublicKey, error) {
	if j.Kty != "RSA" {
		return nil, fmt.Errorf("appleid: key %s is %s, not RSA", j.Kid, j.Kty)
	}
	n, err1 := base64.RawURLEncoding.DecodeString(j.N)
	e, err2 := base64.RawURLEncoding.DecodeString(j.E)
	if err1 != nil || err2 != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
		return nil, fmt.Errorf("appleid: key %s is malformed", j.Kid)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
}

// defaultClient is the guarded client of package outbound; a key set endpoint has no protocol
// reason to redirect, so redirects are refused.
var defaultClient = outbound.New(outbound.Options{})

// KeySet fetches and caches Apple's public keys. A token with an unknown kid triggers one refetch
// (Apple rotates keys), rate-limited so forged kids cannot make us hammer the keys endpoint.
type KeySet struct {
	// URL is the JWKS endpoint (KeysURL in production).
	URL string
	// Client fetches the keys; nil uses the guarded client of package outbound (public addresses
	// only; tests on loopback pass one with AllowPrivate).
	Client *http.Client
	// TTL is how long fetched keys are trusted without refetching; default 1 hour.
	TTL time.Duration
	// Now is the clock for token expiry and the key cache; nil uses time.Now.
	Now func() time.Time

	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

func (s *KeySet) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// minRefetch is the least time between two fetches caused by unknown kids.
const minRefetch = 10 * time.Second

// Key returns the public key with the given kid.
func (s *KeySet) Key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ttl := s.TTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	age := s.now().Sub(s.fetched)
	if k, ok := s.keys[kid]; ok && age < ttl {
		return k, nil
	}
	if s.keys == nil || age >= ttl || age >= minRefetch {
		if err := s.fetchLocked(ctx); err != nil {
			return nil, err
		}
	}
	if k, ok := s.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("appleid: unknown key id %q", kid)
}

func (s *KeySet) fetchLocked(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return err
	}
	c := s.Client
	if c == nil {
		c = defaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("appleid: fetching keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("appleid: fetching keys: status %d", resp.StatusCode)
	}
	var set JWKS
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return fmt.Errorf("appleid: decoding keys: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, j := range set.Keys {
		if k, err := j.rsa(); err == nil {
			keys[j.Kid] = k
		}
	}
	s.keys, s.fetched = keys, s.now()
	return nil
}

// Verify checks an id_token: RS256 signature by a key of the set, iss = issuer, aud = clientID,
// exp in the future, sub present.
func (s *KeySet) Verify(ctx context.Context, idToken, issuer, clientID string) (IDClaims, error) {
	var c IDClaims
	_, err := jwt.ParseWithClaims(idToken, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return s.Key(ctx, kid)
	},
		// Only RS256: accepting "none" or HMAC would let anyone mint tokens.
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithIssuer(issuer),
		jwt.WithAudience(clientID),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
		jwt.WithLeeway(30*time.Second),
	)
	if err != nil {
		return IDClaims{}, fmt.Errorf("appleid: id_token: %w", err)
	}
	if c.Subject == "" {
		return IDClaims{}, errors.New("appleid: id_token has no sub")
	}
	return c, nil
}
