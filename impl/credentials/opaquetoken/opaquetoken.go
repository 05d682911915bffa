// Package opaquetoken mints and resolves the opaque access tokens of the orders and brands APIs.
//
// A token is 32 random bytes (256 bits) in unpadded base64url, 43 characters. The database keeps
// only its SHA-256 with the owner and the expiry, so a leaked table yields no usable token and
// deleting a row revokes the token. A plain SHA-256 suffices: a token is 256 random bits, so there
// is nothing to guess that a slow hash would protect.
//
// Each surface implements Store with its own queries; Tokens adds issuing, resolving and sweeping
// on top. Resolved tokens are cached in memory only while a Watcher relays the database's
// revocations to the cache (see Watcher), so a deleted row is refused at once by every replica.
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
	// CacheFor bounds how long a resolved token may be served from memory; 0 disables the cache.
	// Entries are kept only while a Watcher has the Tokens live, that is listening for the
	// database's revocations (Watcher.Watch): a revoked token is dropped the moment PostgreSQL
	// reports its row deleted, and CacheFor is only a backstop. Without a Watcher, or while its
	// connection is down, nothing is cached and every Resolve asks the store.
	CacheFor time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultCacheFor is the CacheFor of the orders and brands surfaces: revocations reach the cache
// through a Watcher, so the bound only ages out entries (and so memory) of tokens no longer used.
const DefaultCacheFor = time.Minute

// maxCache bounds the cache; past it the cache is emptied and refills from the store, which is
// simple and cannot serve a stale entry.
const maxCache = 100_000

// Tokens issues tokens into a Store and resolves them to owners. It is safe for concurrent use.
type Tokens[Owner any] struct {
	store Store[Owner]
	opts  Options

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]entry[Owner] // by the token's hash, which revocations name
	// live says the cache may be filled: a Watcher is listening for this Tokens' revocations.
	live bool
	// gen counts the drops, flushes and changes of live. A store read records it before it
	// starts and fills the cache only if it is unchanged when the read is done, so an answer the
	// database gave before a revocation (or before the listener was up) is never cached after it.
	gen uint64
}

var _ revocable = (*Tokens[int])(nil)

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
	return &Tokens[Owner]{store: store, opts: opts, cache: make(map[[sha256.Size]byte]entry[Owner])}, nil
}

// TTL is the lifetime of issued tokens.
func (t *Tokens[Owner]) TTL() time.Duration { return t.opts.TTL }

// Issue mints a token for owner, valid for TTL.
func (t *Tokens[Owner]) Issue(ctx context.Context, owner Owner) (string, error) {
	gen := t.generation()
	tok, now, expires, err := t.issue(ctx, t.store, owner)
	if err != nil {
		return "", err
	}
	t.put(sha256.Sum256([]byte(tok)), owner, now, expires, gen)
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
	if !WellFormed(tok) {
		return zero, ErrInvalid
	}
	key := sha256.Sum256([]byte(tok))
	now := t.opts.Now()
	t.mu.RLock()
	e, ok := t.cache[key]
	gen := t.gen
	t.mu.RUnlock()
	if ok && now.Before(e.until) {
		return e.owner, nil
	}
	owner, expires, err := t.store.TokenOwner(ctx, key[:])
	if err != nil {
		return zero, err
	}
	t.put(key, owner, now, expires, gen)
	return owner, nil
}

func (t *Tokens[Owner]) generation() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.gen
}

// put caches owner for key if the cache is live and nothing was dropped since gen was read.
func (t *Tokens[Owner]) put(key [sha256.Size]byte, owner Owner, now, expires time.Time, gen uint64) {
	if t.opts.CacheFor <= 0 {
		return
	}
	until := now.Add(t.opts.CacheFor)
	if expires.Before(until) {
		until = expires
	}
	t.mu.Lock()
	if t.live && t.gen == gen {
		if len(t.cache) >= maxCache {
			t.cache = make(map[[sha256.Size]byte]entry[Owner])
		}
		t.cache[key] = entry[Owner]{owner: owner, until: until}
	}
	t.mu.Unlock()
}

// Forget drops tok from this process's cache at once, for a surface that revokes it (its store
// deletes the row): the Watcher tells the other replicas, and this one, a moment later, but the
// caller's next request must not be served from the cache in between.
func (t *Tokens[Owner]) Forget(tok string) {
	t.drop(sha256.Sum256([]byte(tok)))
}

// ForgetHash is Forget for the token with hash (a row a surface deleted by other columns).
func (t *Tokens[Owner]) ForgetHash(hash []byte) {
	if len(hash) == sha256.Size {
		t.drop([sha256.Size]byte(hash))
	}
}

// drop forgets the token with hash; a Watcher calls it when the token's row is deleted.
func (t *Tokens[Owner]) drop(hash [sha256.Size]byte) {
	t.mu.Lock()
	delete(t.cache, hash)
	t.gen++
	t.mu.Unlock()
}

// flush forgets every token; a Watcher calls it when the table was emptied.
func (t *Tokens[Owner]) flush() {
	t.mu.Lock()
	clear(t.cache)
	t.gen++
	t.mu.Unlock()
}

// setLive allows (true) or stops (false) caching: a Watcher calls it once it listens for the
// Tokens' revocations and as soon as it may have missed one. Stopping empties the cache.
func (t *Tokens[Owner]) setLive(live bool) {
	t.mu.Lock()
	t.live = live
	if !live {
		clear(t.cache)
	}
	t.gen++
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
