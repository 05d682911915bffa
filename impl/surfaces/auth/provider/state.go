package provider

import (
	"context"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// UsedIDs remembers the ids of single-use tokens (verified-login confirmations) until they expire.
// The in-memory default (NewMemoryUsedIDs) holds for one process; replicas behind a load balancer
// need a shared implementation (package pgstate), or a confirmation replayed on another replica
// logs in again. Implementations are safe for concurrent use.
type UsedIDs interface {
	// Use marks id used until expires. firstUse is true for exactly one call per id, whichever
	// process makes it.
	Use(ctx context.Context, id string, expires time.Time) (firstUse bool, err error)
}

// NewMemoryUsedIDs returns the in-process UsedIDs: entries live until the token would have expired
// anyway, which bounds the set by the sending rate.
func NewMemoryUsedIDs() UsedIDs { return &memoryUsedIDs{used: map[string]time.Time{}} }

type memoryUsedIDs struct {
	mu   sync.Mutex
	used map[string]time.Time
}

func (m *memoryUsedIDs) Use(_ context.Context, id string, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for k, e := range m.used {
		if now.After(e) {
			delete(m.used, k)
		}
	}
	// The id is not a secret (it sits in the signed token), so a plain map lookup is fine.
	if _, seen := m.used[id]; seen {
		return false, nil
	}
	m.used[id] = expires
	return true, nil
}

// TelegramLogin is a messenger login in progress.
type TelegramLogin struct {
	// Aud is the site the login is for; Session asks for session-only cookies.
	Aud     string
	Session bool
	// Expires ends the request, confirmed or not.
	Expires time.Time
	// User is set once the user confirmed the request through the bot.
	User *token.User
}

// TelegramLogins keeps pending messenger logins between the request that starts one, the bot
// update that confirms it and the request that completes it: three events that may reach three
// different replicas. The in-memory default (NewMemoryTelegramLogins) holds for one process; package
// pgstate shares them through PostgreSQL. Implementations are safe for concurrent use.
type TelegramLogins interface {
	// Start records a new, unconfirmed request under tok.
	Start(ctx context.Context, tok string, l TelegramLogin) error
	// Pending reports whether tok is a live, unconfirmed request.
	Pending(ctx context.Context, tok string) (bool, error)
	// Confirm sets the user of a live, unconfirmed request; false when there is none (unknown,
	// expired or already confirmed, so a second user cannot take a request over).
	Confirm(ctx context.Context, tok string, u token.User) (bool, error)
	// Take removes a live, confirmed request and returns it: one login per confirmation.
	Take(ctx context.Context, tok string) (TelegramLogin, bool, error)
}

// maxTelegramRequests bounds the in-memory pending logins: anyone can open them, so without a bound
// a flood of GET /login would grow memory for the whole RequestTTL.
const maxTelegramRequests = 10000

// NewMemoryTelegramLogins returns the in-process TelegramLogins, bounded to 10,000 requests (the
// one closest to expiry makes room for a new one).
func NewMemoryTelegramLogins() TelegramLogins {
	return &memoryTelegramLogins{requests: map[string]*TelegramLogin{}}
}

type memoryTelegramLogins struct {
	mu       sync.Mutex
	requests map[string]*TelegramLogin
}

func (m *memoryTelegramLogins) Start(_ context.Context, tok string, l TelegramLogin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for k, r := range m.requests {
		if !now.Before(r.Expires) {
			delete(m.requests, k)
		}
	}
	if len(m.requests) >= maxTelegramRequests {
		var oldest string
		var at time.Time
		for k, r := range m.requests {
			if oldest == "" || r.Expires.Before(at) {
				oldest, at = k, r.Expires
			}
		}
		delete(m.requests, oldest)
	}
	l.User = nil
	m.requests[tok] = &l
	return nil
}

func (m *memoryTelegramLogins) Pending(_ context.Context, tok string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.requests[tok]
	return ok && r.User == nil && time.Now().Before(r.Expires), nil
}

func (m *memoryTelegramLogins) Confirm(_ context.Context, tok string, u token.User) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.requests[tok]
	if !ok || r.User != nil || !time.Now().Before(r.Expires) {
		return false, nil
	}
	r.User = &u
	return true, nil
}

func (m *memoryTelegramLogins) Take(_ context.Context, tok string) (TelegramLogin, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.requests[tok]
	if !ok || r.User == nil || !time.Now().Before(r.Expires) {
		return TelegramLogin{}, false, nil
	}
	delete(m.requests, tok)
	return *r, true, nil
}

// Leader runs work that exactly one process of a deployment may do, such as polling a bot's
// updates (the Bot API allows one poller per bot). Lead blocks until ctx ends; while this process
// is elected it runs fn with a context that ends when the election is lost.
type Leader interface {
	Lead(ctx context.Context, fn func(ctx context.Context))
}

// AlwaysLeader is the single-process Leader: it runs fn at once. It is the default.
type AlwaysLeader struct{}

// Lead runs fn(ctx).
func (AlwaysLeader) Lead(ctx context.Context, fn func(context.Context)) { fn(ctx) }
