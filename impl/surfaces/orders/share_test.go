package orders

import (
	"context"
	"testing"
	"time"
)

// TestShare_OneUserWaitsForItsOwnPlacesOnly: with one place per user, a user's second read waits
// until the first is done while another user's read goes at once; a wait ends with its request,
// and an idle user leaves no entry behind.
func TestShare_OneUserWaitsForItsOwnPlacesOnly(t *testing.T) {
	s := newShare(1, 1) // a pool of one: nothing to spare
	ctx := context.Background()
	release, err := s.acquire(ctx, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.acquire(ctx, 2, true)
	if err != nil {
		t.Fatal("another user waited for user 1's place")
	}
	other()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.acquire(short, 1, true); err == nil {
		t.Fatal("user 1 got a second place")
	}
	got := make(chan struct{})
	go func() {
		r, err := s.acquire(ctx, 1, true)
		if err == nil {
			r()
		}
		close(got)
	}()
	release()
	<-got
	s.mu.Lock()
	n := len(s.users)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d users left in the map after every read ended", n)
	}
}

// TestShare_ALoneUserUsesAnIdlePool: while no other user reads, a user's shallow pages go beyond
// its places (deep ones never do) as long as the list reads in flight leave a connection of the pool for others (pool 4:
// three at once); past that they wait for the user's own place. Once another user reads, each is
// held to its places again until the other has not read for a while; when every read has ended
// nothing is left counted.
func TestShare_ALoneUserUsesAnIdlePool(t *testing.T) {
	s := newShare(1, 4)
	s.alone = 50 * time.Millisecond
	ctx := context.Background()
	waits := func(user int64) bool {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		r, err := s.acquire(short, user, true)
		if err == nil {
			r()
		}
		return err != nil
	}
	var releases []func()
	for i := range 3 {
		r, err := s.acquire(ctx, 1, true)
		if err != nil {
			t.Fatalf("read %d of a lone user waited on an idle pool", i+1)
		}
		releases = append(releases, r)
	}
	if !waits(1) {
		t.Fatal("a fourth read of one user went ahead, leaving no connection for anyone else")
	}
	other, err := s.acquire(ctx, 2, true)
	if err != nil {
		t.Fatal("another user waited behind user 1's reads")
	}
	other()
	releases[2]()
	releases[1]()
	// Two in flight before, one now (user 1's own place): room to spare, but user 2 just read.
	if !waits(1) {
		t.Fatal("user 1 went beyond its place right after another user read")
	}
	time.Sleep(s.alone + 10*time.Millisecond)
	deep, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.acquire(deep, 1, false); err == nil {
		t.Fatal("a deep page went beyond its user's place")
	}
	r, err := s.acquire(ctx, 1, true)
	if err != nil {
		t.Fatal("user 1, alone again, waited on an idle pool")
	}
	r()
	releases[0]()
	s.mu.Lock()
	busy, n := s.busy, len(s.users)
	s.mu.Unlock()
	if busy != 0 || n != 0 {
		t.Fatalf("%d reads counted and %d users left after every read ended", busy, n)
	}
}
