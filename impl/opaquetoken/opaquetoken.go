// Package opaquetoken mints and resolves the opaque access tokens of the orders and brands APIs.
//
// A token is 32 random bytes (256 bits) in unpadded base64url, 43 characters. The database keeps
// only its SHA-256 with the owner and the expiry, so a leaked table yields no usable token and
// deleting a row revokes the token. A plain SHA-256 suffices: a token is 256 random bits, so there
// is nothing to guess that a slow hash would protect.
//
// Each surface implements Store with its own queries; Tokens adds issuing, resolving (with an
// optional short-lived cache) and sweeping on top.
package opaquetoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Len is the length in characters of every token Mint returns.
const Len = 43

// ErrInvalid is an unknown, malformed, expired or revoked token.
var ErrInvalid = errors.New("opaquetoken: invalid token")

// Mint returns a fresh token and the hash the database keeps of it.
func Mint() (tok string, hash []byte, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, fmt.Errorf("opaquetoken: %w", err)
	}
	tok = base64.RawURLEncoding.EncodeToString(b[:])
	return tok, Hash(tok), nil
}

// Hash is what the database keys a token by: its SHA-256.
func Hash(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// WellFormed reports whether tok has the shape Mint gives; anything else cannot match a row, so
// callers refuse it without a query.
func WellFormed(tok string) bool {
	if len(tok) != Len {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Store keeps one surface's token hashes; the surface implements it with its own queries. Owner
// is whatever a resolved token stands for there (a principal, a user).
type Store[Owner any] interface {
	// SaveToken records hash as a token of owner, valid until expires.
	SaveToken(ctx context.Context, hash []byte, owner Owner, expires time.Time) error
	// TokenOwner returns the owner of the unexpired token with hash and when the token expires,
	// or ErrInvalid when there is none.
	TokenOwner(ctx context.Context, hash []byte) (owner Owner, expires time.Time, err error)
	// DeleteExpiredTokens deletes the rows of expired tokens and reports how many there were.
	DeleteExpiredTokens(ctx context.Context) (int64, error)
}

// Options configure Tokens.
type Options struct {
	// TTL is the lifetime of issued tokens; it must be positive.
	TTL time.Duration
	// CacheFor is how long a resolved token may be served from memory without asking the store;
	// 0 disables the cache. A deleted (revoked) token keeps working on a replica for at most this
	// long, so keep it to seconds.
	CacheFor time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// maxCache bounds the cache; past it the cache is emptied and refills from the store, which is
// simple and cannot serve a stale entry.
const maxCache = 100_000

// Tokens issues tokens into a Store and resolves them to owners. It is safe for concurrent use.
type Tokens[Owner any] struct {
	store Store[Owner]
	opts  Options

	mu    sync.RWMutex
	cache map[string]entry[Owner]
}

type entry[Owner any] struct {
	owner Owner
	until time.Time // the earlier of the token's expiry and the end of the caching period
}

// New returns Tokens over store.
func New[Owner any](store Store[Owner], opts Options) (*Tokens[Owner], error) {
	if opts.TTL <= 0 {
		return nil, errors.New("opaquetoken: TTL must be positive")
	}
	if opts.CacheFor < 0 {
		return nil, errors.New("opaquetoken: CacheFor must not be negative")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Tokens[Owner]{store: store, opts: opts, cache: make(map[string]entry[Owner])}, nil
}

// TTL is the lifetime of issued tokens.
func (t *Tokens[Owner]) TTL() time.Duration { return t.opts.TTL }

// Issue mints a token for owner, valid for TTL.
func (t *Tokens[Owner]) Issue(ctx context.Context, owner Owner) (string, error) {
	tok, now, expires, err := t.issue(ctx, t.store, owner)
	if err != nil {
		return "", err
	}
	t.put(tok, owner, now, expires)
	return tok, nil
}

// IssueTo is Issue into store instead of the Tokens' own: the same surface's store bound to a
// transaction, so the token commits or rolls back with the rows written beside it (a user and its
// first token). The token is not cached, as the transaction may still roll back; once committed it
// resolves from the store.
func (t *Tokens[Owner]) IssueTo(ctx context.Context, store Store[Owner], owner Owner) (string, error) {
	tok, _, _, err := t.issue(ctx, store, owner)
	return tok, err
}

func (t *Tokens[Owner]) issue(ctx context.Context, store Store[Owner], owner Owner) (tok string, now, expires time.Time, err error) {
	tok, hash, err := Mint()
	if err != nil {
		return "", now, expires, err
	}
	now = t.opts.Now()
	expires = now.Add(t.opts.TTL)
	if err := store.SaveToken(ctx, hash, owner, expires); err != nil {
		return "", now, expires, err
	}
	return tok, now, expires, nil
}

// Resolve returns the owner of tok, or ErrInvalid.
func (t *Tokens[Owner]) Resolve(ctx context.Context, tok string) (Owner, error) {
	var zero Owner
	now := t.opts.Now()
	if t.opts.CacheFor > 0 {
		t.mu.RLock()
		e, ok := t.cache[tok]
		t.mu.RUnlock()
		if ok && now.Before(e.until) {
			return e.owner, nil
		}
	}
	if !WellFormed(tok) {
		return zero, ErrInvalid
	}
	owner, expires, err := t.store.TokenOwner(ctx, Hash(tok))
	if err != nil {
		return zero, err
	}
	t.put(tok, owner, now, expires)
	return owner, nil
}

func (t *Tokens[Owner]) put(tok string, owner Owner, now, expires time.Time) {
	if t.opts.CacheFor <= 0 {
		return
	}
	until := now.Add(t.opts.CacheFor)
	if expires.Before(until) {
		until = expires
	}
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		t.cache = make(map[string]entry[Owner])
	}
	t.cache[tok] = entry[Owner]{owner: owner, until: until}
	t.mu.Unlock()
}

// Forget drops tok from this process's cache, for a surface that revokes it (its store deletes
// the row); other replicas stop serving it within CacheFor.
func (t *Tokens[Owner]) Forget(tok string) {
	t.mu.Lock()
	delete(t.cache, tok)
	t.mu.Unlock()
}

// Sweep deletes expired tokens from the store and stale entries from the cache; servers call it
// periodically.
func (t *Tokens[Owner]) Sweep(ctx context.Context) (int64, error) {
	now := t.opts.Now()
	t.mu.Lock()
	for k, e := range t.cache {
		if !now.Before(e.until) {
			delete(t.cache, k)
		}
	}
	t.mu.Unlock()
	return t.store.DeleteExpiredTokens(ctx)
}
