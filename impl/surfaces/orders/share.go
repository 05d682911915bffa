package orders

import (
	"context"
	"sync"
	"time"
)

// share bounds how many list reads one user runs at once in this process while others read too,
// so that one user paging on many connections holds at most a fair part of the database pool and
// everyone else still finds connections free. A user's reads beyond its places wait for one of
// that user's own places (until their request ends), never for another user's. The bound gives way
// for cheap reads when nobody else reads: while no other user has read a list in this process for
// alone (a second), a user's read of a shallow page (starting at most ShallowOffset rows in) goes
// at once beyond its places if the list reads in flight leave a connection of the pool to spare.
// So a lone user is not held to a quarter of an idle pool, deep pages (the costly ones) never go
// beyond the places, and the moment another user reads every user is back to its places.
type share struct {
	per int
	// spare is how many list reads may be in flight for a user to exceed its places: the pool's
	// size less one connection left for everyone else (0: never).
	spare int
	// alone is how long no other user must have read for one user to exceed its places.
	alone time.Duration
	mu    sync.Mutex
	busy  int   // list reads in flight, own places and beyond
	last  int64 // the user of the latest read
	mixed int64 // unix nanoseconds until which reads count as shared between users
	users map[int64]*places
}

// places is one user's semaphore and how many requests use or wait for it (the entry goes when
// none does, so the map holds only active users).
type places struct {
	sem  chan struct{}
	refs int
}

// ShallowOffset is how many rows into its list a page may start and still go beyond its user's
// places on an idle pool (share): such a page walks at most a few hundred index entries.
const ShallowOffset = 100

// newShare gives each user per places, over a pool of poolSize connections.
func newShare(per, poolSize int) *share {
	return &share{per: max(per, 1), spare: max(poolSize-1, 0), alone: time.Second, users: map[int64]*places{}}
}

// acquire takes one of user's places, or, for a shallow read, goes beyond them while user reads
// alone and the pool has connections to spare, else waits for one of the user's places; release
// gives it back.
func (s *share) acquire(ctx context.Context, user int64, shallow bool) (release func(), err error) {
	s.mu.Lock()
	u := s.users[user]
	if u == nil {
		u = &places{sem: make(chan struct{}, s.per)}
		s.users[user] = u
	}
	u.refs++
	now := time.Now().UnixNano()
	if user != s.last {
		if s.last != 0 { // another user read before (0: nobody has yet)
			s.mixed = now + int64(s.alone)
		}
		s.last = user
	}
	select {
	case u.sem <- struct{}{}:
		s.busy++
		s.mu.Unlock()
		return func() { <-u.sem; s.drop(user, u, true) }, nil
	default:
	}
	if shallow && s.busy < s.spare && now >= s.mixed {
		s.busy++
		s.mu.Unlock()
		return func() { s.drop(user, u, true) }, nil
	}
	s.mu.Unlock()
	select {
	case u.sem <- struct{}{}:
		s.mu.Lock()
		s.busy++
		s.mu.Unlock()
		return func() { <-u.sem; s.drop(user, u, true) }, nil
	case <-ctx.Done():
		s.drop(user, u, false)
		return nil, ctx.Err()
	}
}

// drop ends one request of user: a read when read is set, else a wait given up.
func (s *share) drop(user int64, u *places, read bool) {
	s.mu.Lock()
	if read {
		s.busy--
	}
	if u.refs--; u.refs == 0 {
		delete(s.users, user)
	}
	s.mu.Unlock()
}
