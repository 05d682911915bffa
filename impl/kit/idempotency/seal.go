package idempotency

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
)

// request is what identifies a request under a key.
type request struct {
	op    Operation
	key   string
	scope [sha256.Size]byte // the operation and the caller (user or client network)
	hash  [sha256.Size]byte // the whole request
	seal0 [sha256.Size]byte // the key sealing its answer, derived from the request and the key
	lock  int64             // the key's advisory lock (ClaimIdempotencyKey)
}

// newRequest hashes what identifies r under key: the scope (the operation and the caller, so one
// caller's key never answers another's request), the request (method, path, query, content type
// and body, so the same key with another request is told apart; an access_token in the query is
// the credential, not the request, and is left out so a retry may present another token) and the
// key that seals the answer (the request and the key together, which the table does not hold: a
// registration's answer, which carries a token, opens only with its password).
func newRequest(op Operation, key, caller string, r *http.Request, body []byte) request {
	field := func(h interface{ Write([]byte) (int, error) }, s string) {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	scope := sha256.New()
	field(scope, "scope")
	field(scope, op.Method+" "+op.Path)
	field(scope, caller)
	req := request{op: op, key: key}
	scope.Sum(req.scope[:0])
	query := r.URL.Query()
	query.Del("access_token")

	whole := func(purpose string) [sha256.Size]byte {
		h := sha256.New()
		field(h, purpose)
		_, _ = h.Write(req.scope[:])
		field(h, key)
		field(h, r.Method)
		field(h, r.URL.Path)
		field(h, query.Encode())
		field(h, r.Header.Get("Content-Type"))
		_, _ = h.Write(body)
		var out [sha256.Size]byte
		h.Sum(out[:0])
		return out
	}
	// The lock is the key's, whatever the request: two requests under one key meet on it.
	lock := sha256.New()
	field(lock, "lock")
	_, _ = lock.Write(req.scope[:])
	field(lock, key)
	req.lock = int64(binary.BigEndian.Uint64(lock.Sum(nil)[:8]))
	req.hash, req.seal0 = whole("request"), whole("seal")
	return req
}

// answer is a response as kept under a key.
type answer struct {
	Status int               `json:"s"`
	Header map[string]string `json:"h"`
	Body   []byte            `json:"b"`
}

// replay writes the answer again, marked as a replay.
func (a answer) replay(w http.ResponseWriter) {
	for k, v := range a.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// seal encrypts the answer with AES-256-GCM under the request's sealing key: a nonce, then the
// ciphertext.
func (req request) seal(a answer) ([]byte, error) {
	plain, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	gcm, err := req.gcm()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize(), gcm.NonceSize()+len(plain)+gcm.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, plain, nil), nil
}

// open decrypts what seal made for the same request.
func (req request) open(sealed []byte) (answer, error) {
	var a answer
	gcm, err := req.gcm()
	if err != nil {
		return a, err
	}
	if len(sealed) < gcm.NonceSize() {
		return a, errors.New("idempotency: a kept answer is too short")
	}
	plain, err := gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], nil)
	if err != nil {
		return a, err
	}
	return a, json.Unmarshal(plain, &a)
}

func (req request) gcm() (cipher.AEAD, error) {
	block, err := aes.NewCipher(req.seal0[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
