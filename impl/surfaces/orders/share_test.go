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
	s := newShare(1)
	ctx := context.Background()
	release, err := s.acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.acquire(ctx, 2)
	if err != nil {
		t.Fatal("another user waited for user 1's place")
	}
	other()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.acquire(short, 1); err == nil {
		t.Fatal("user 1 got a second place")
	}
	got := make(chan struct{})
	go func() {
		r, err := s.acquire(ctx, 1)
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
