package orders

import (
	"context"
	"sync"
	"time"
)

// writeShare bounds how many writes (creates and moves) and reads of the caller's own account one
// user runs at once in this process, as share does for list pages: one user on many connections
// holds at most its places of the database pool, and a bystander's create or list still finds a
// connection. A user's request beyond its places waits in the user's own line (line long) for one
// of them; one that finds the line full waits at most writeRefuseAfter for a place and is then
// refused with ErrTooManyAtOnce (a 429 with Retry-After), before any database work, so a flood
// costs the pool nothing and its refusals little CPU.
type writeShare struct {
	per, line int
	// refuseAfter is how long a request past the line waits for a place before it is refused.
	refuseAfter time.Duration
	mu          sync.Mutex
	users       map[int64]*writePlaces
}

// writePlaces is one user's places and how many requests hold or wait for one (the entry goes when
// none does).
type writePlaces struct {
	sem     chan struct{}
	waiting int
	refs    int
}

// writeLine is how many requests of one user may wait per place: sixteen, as many as wait for one
// client's share of the password hasher (password.DefaultClientLine), so a client firing a burst of
// requests together (a page, a script's workers) waits its turn instead of being refused, while
// one on tens of connections has the rest held and refused.
const writeLine = 16

// writeRefuseAfter is how long a request past its user's line waits for a place before it is
// refused.
const writeRefuseAfter = time.Second

// newWriteShare gives each user per places (at least 1) and a line of writeLine times as many.
func newWriteShare(per int) *writeShare {
	per = max(per, 1)
	return &writeShare{per: per, line: writeLine * per, refuseAfter: writeRefuseAfter, users: map[int64]*writePlaces{}}
}

// acquire takes one of user's places, waiting in the user's line while they are taken; release
// gives it back. A full line is ErrTooManyAtOnce, a request ended while waiting its ctx's error.
func (s *writeShare) acquire(ctx context.Context, user int64) (release func(), err error) {
	s.mu.Lock()
	u := s.users[user]
	if u == nil {
		u = &writePlaces{sem: make(chan struct{}, s.per)}
		s.users[user] = u
	}
	release = func() { <-u.sem; s.drop(user, u) }
	select {
	case u.sem <- struct{}{}:
		u.refs++
		s.mu.Unlock()
		return release, nil
	default:
	}
	if u.waiting >= s.line {
		// Past the line: a place that frees within refuseAfter is still taken, else the request
		// is refused. Holding the refusal that long is what keeps it cheap: a client that sends
		// again at once gets one refusal per connection per refuseAfter, not as many as the
		// server can write, whose CPU, not the pool, would then slow everyone else.
		u.refs++
		s.mu.Unlock()
		t := time.NewTimer(s.refuseAfter)
		defer t.Stop()
		select {
		case u.sem <- struct{}{}:
			return release, nil
		case <-t.C:
			s.drop(user, u)
			return nil, refuse(ErrTooManyAtOnce, "you have %d requests running and %d waiting, the most one user may at once; try again when they are answered", s.per, s.line)
		case <-ctx.Done():
			s.drop(user, u)
			return nil, ctx.Err()
		}
	}
	u.waiting++
	u.refs++
	s.mu.Unlock()
	select {
	case u.sem <- struct{}{}:
		err = nil
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	u.waiting--
	s.mu.Unlock()
	if err != nil {
		s.drop(user, u)
		return nil, err
	}
	return release, nil
}

// drop ends one request of user, deleting its entry once nothing holds or waits.
func (s *writeShare) drop(user int64, u *writePlaces) {
	s.mu.Lock()
	if u.refs--; u.refs == 0 {
		delete(s.users, user)
	}
	s.mu.Unlock()
}
