package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/golang-jwt/jwt/v5"
)

// hs256Header is the header this package writes (golang-jwt writes the same bytes),
// base64url-encoded; tokens carrying it skip the header decode.
var hs256Header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// hs256 is the scratch state of one signature: an HMAC-SHA256 keyed once (hmac.New costs as much
// as the MAC of a whole token: the key schedule and two extra SHA-256 blocks) and Reset for each
// use, and room for its output and the token's. Pooled per secret, so nothing here is allocated
// per request.
type hs256 struct {
	mac      hash.Hash
	sum, sig [sha256.Size]byte
}

// maxKeyedSecrets bounds the secrets that get a pool of keyed MACs. The secret is chosen by the
// token's aud before its signature is checked, so a SecretReader that derives a secret for any aud
// would otherwise let forged tokens grow the set without bound; past the bound a MAC is keyed per use.
const maxKeyedSecrets = 64

// macs maps a secret to its pool of *hs256; the map is replaced, never changed, so reads take no lock.
type macs struct {
	m  atomic.Pointer[map[string]*sync.Pool]
	mu sync.Mutex
}

func (ms *macs) get(key string) (*hs256, *sync.Pool) {
	if m := ms.m.Load(); m != nil {
		if p := (*m)[key]; p != nil {
			return p.Get().(*hs256), p
		}
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	old := map[string]*sync.Pool{}
	if m := ms.m.Load(); m != nil {
		old = *m
	}
	if p := old[key]; p != nil {
		return p.Get().(*hs256), p
	}
	// The map keeps its own copy of the secret: key may be a view of a caller's buffer.
	k := strings.Clone(key)
	p := &sync.Pool{New: func() any { return &hs256{mac: hmac.New(sha256.New, []byte(k))} }}
	if len(old) >= maxKeyedSecrets {
		return p.Get().(*hs256), nil
	}
	next := make(map[string]*sync.Pool, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[k] = p
	ms.m.Store(&next)
	return p.Get().(*hs256), p
}

func (h *hs256) release(p *sync.Pool) {
	if p != nil {
		p.Put(h)
	}
}

// bytesOf views s as bytes without copying, for hash writes: hash.Hash.Write neither changes nor
// keeps its argument (io.Writer's contract), and the token string would otherwise be copied on
// every request only to be read once.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// mac computes the HMAC of in into h.sum.
func (h *hs256) compute(in string) []byte {
	h.mac.Reset()
	h.mac.Write(bytesOf(in))
	return h.mac.Sum(h.sum[:0])
}

// sign returns the compact JWS of claims: the bytes golang-jwt's SignedString makes (the same
// header, json.Marshal of the claims, HMAC-SHA256), with the MAC keyed once per secret.
func sign(key string, ms *macs, c Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	n := len(hs256Header) + 1 + enc.EncodedLen(len(payload))
	out := make([]byte, n+1+enc.EncodedLen(sha256.Size))
	copy(out, hs256Header)
	out[len(hs256Header)] = '.'
	enc.Encode(out[len(hs256Header)+1:], payload)
	h, p := ms.get(key)
	defer h.release(p)
	h.mac.Reset()
	h.mac.Write(out[:n])
	out[n] = '.'
	enc.Encode(out[n+1:], h.mac.Sum(h.sum[:0]))
	return string(out), nil
}

// verify checks a compact JWS: three base64url segments, header alg exactly HS256 (anything else,
// "none" and every asymmetric or other HMAC algorithm included, is refused before a key is
// chosen) and no crit, then the HMAC (constant-time compare) with the key for the token's
// audience. Claims are returned only once the signature holds.
func (s *Service) verify(tok string) (Claims, error) {
	i := strings.IndexByte(tok, '.')
	j := strings.LastIndexByte(tok, '.')
	if i <= 0 || j <= i || strings.IndexByte(tok[i+1:j], '.') >= 0 {
		return Claims{}, errors.New("not a compact JWS")
	}
	hdr, payload, sig := tok[:i], tok[i+1:j], tok[j+1:]
	if hdr != hs256Header {
		if err := checkHeader(hdr); err != nil {
			return Claims{}, err
		}
	}
	enc := base64.RawURLEncoding
	// A buffer of its own, never reused: the claims' strings are cut from it (decodeClaims).
	pb := make([]byte, enc.DecodedLen(len(payload)))
	n, err := enc.Decode(pb, bytesOf(payload))
	if err != nil {
		return Claims{}, errors.New("bad payload encoding")
	}
	c, err := decodeClaims(pb[:n])
	if err != nil {
		return Claims{}, errors.New("bad claims")
	}
	if len(c.Audience) > 1 {
		return Claims{}, errors.New("several audiences")
	}
	k, err := s.secret(c.Aud())
	if err != nil {
		return Claims{}, err
	}
	// Anything but 43 characters is not an encoded SHA-256 MAC; checking first keeps the decode
	// inside sig's array.
	if len(sig) != enc.EncodedLen(sha256.Size) {
		return Claims{}, jwt.ErrSignatureInvalid
	}
	h, p := s.macs.get(k)
	defer h.release(p)
	if _, err := enc.Decode(h.sig[:], bytesOf(sig)); err != nil {
		return Claims{}, errors.New("bad signature encoding")
	}
	if !hmac.Equal(h.compute(tok[:j]), h.sig[:]) {
		return Claims{}, jwt.ErrSignatureInvalid
	}
	return c, nil
}

// checkHeader decodes a header other than the one this package writes: alg must be HS256, and a
// crit of any value, null and [] included, is refused: crit lists extensions the recipient must
// understand or refuse the token (RFC 7515 §4.1.11), and this package implements none, so
// accepting it would ignore a rule the issuer declared binding.
func checkHeader(hdr string) error {
	hb, err := base64.RawURLEncoding.DecodeString(hdr)
	if err != nil {
		return errors.New("bad header encoding")
	}
	var h struct {
		Alg  string          `json:"alg"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return errors.New("bad header")
	}
	if h.Alg != jwt.SigningMethodHS256.Alg() {
		return fmt.Errorf("algorithm %q refused", h.Alg)
	}
	if h.Crit != nil {
		return errors.New("critical header extensions refused")
	}
	return nil
}
