// Package sessions lets the auth service end a login for good. A JWT is valid on its own until it
// expires, and a cookie one is refreshed until the cookie lifetime has passed, so clearing the
// cookies at logout leaves a captured token working. Logout therefore records the session's id
// (the token's jti, which every refresh keeps) as revoked, and the middleware refuses, and never
// refreshes, a token of a revoked session, right after verifying it.
//
// Revoked runs on every authenticated request, so implementations answer from memory. NewMemory is
// the default, for one process; pgstate.Sessions keeps the revocations in PostgreSQL and learns
// other replicas' within a second (LISTEN/NOTIFY, polling while the listener is down), so N
// replicas behave like one.
package sessions

import (
	"context"
	"sync"
	"time"
)

// Store records revoked sessions. Implementations are safe for concurrent use.
type Store interface {
	// Revoke ends the session id: no token carrying it is accepted or refreshed from now on. until
	// is when every token of the session would be refused anyway (the end of its cookie lifetime),
	// after which the record may be forgotten.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether the session id was revoked. It is called on every authenticated
	// request, after the token's signature and times were verified: it must not do I/O.
	Revoked(id string) bool
}

// Memory is the in-process Store: a map from id to the time it may be forgotten.
type Memory struct {
	now func() time.Time

	mu      sync.RWMutex
	revoked map[string]time.Time
	writes  int // since the last sweep
}

// NewMemory returns an empty in-process Store; now is the clock (nil: time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, revoked: map[string]time.Time{}}
}

// Revoke implements Store.
func (m *Memory) Revoke(_ context.Context, id string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writes++; m.writes >= 64 && m.writes >= len(m.revoked) {
		// Swept as revocations arrive, at a cost spread over as many as the map holds.
		m.writes = 0
		now := m.now()
		for k, t := range m.revoked {
			if !t.After(now) {
				delete(m.revoked, k)
			}
		}
	}
	if t, ok := m.revoked[id]; !ok || until.After(t) {
		m.revoked[id] = until
	}
	return nil
}

// Revoked implements Store.
func (m *Memory) Revoked(id string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.revoked[id]
	return ok
}
