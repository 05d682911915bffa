package orders

import (
	"context"
	"sync"
)

// share bounds how many list reads one user runs at once in this process, so that one user
// paging on many connections holds at most a fair part of the database pool and everyone else
// still finds connections free. A user's reads beyond the bound wait for one of that user's own
// places (until their request ends), never for another user's.
type share struct {
	per   int
	mu    sync.Mutex
	users map[int64]*places
}

// places is one user's semaphore and how many requests use or wait for it (the entry goes when
// none does, so the map holds only active users).
type places struct {
	sem  chan struct{}
	refs int
}

func newShare(per int) *share {
	return &share{per: max(per, 1), users: map[int64]*places{}}
}

// acquire takes one of user's places, waiting while all are taken; release gives it back.
func (s *share) acquire(ctx context.Context, user int64) (release func(), err error) {
	s.mu.Lock()
	u := s.users[user]
	if u == nil {
		u = &places{sem: make(chan struct{}, s.per)}
		s.users[user] = u
	}
	u.refs++
	s.mu.Unlock()
	select {
	case u.sem <- struct{}{}:
		return func() { <-u.sem; s.drop(user, u) }, nil
	case <-ctx.Done():
		s.drop(user, u)
		return nil, ctx.Err()
	}
}

func (s *share) drop(user int64, u *places) {
	s.mu.Lock()
	if u.refs--; u.refs == 0 {
		delete(s.users, user)
	}
	s.mu.Unlock()
}
