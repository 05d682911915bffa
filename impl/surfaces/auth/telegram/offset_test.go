package telegram_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// handled records what a Poller's Handle saw, from the poller's goroutine.
type handled struct {
	mu    sync.Mutex
	texts []string
}

func (h *handled) add(s string) { h.mu.Lock(); h.texts = append(h.texts, s); h.mu.Unlock() }

func (h *handled) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.texts)
}

// waitFor waits (bounded generously) until the last handled text is last, and returns them all.
func (h *handled) waitFor(t *testing.T, last string) []string {
	t.Helper()
	deadline := time.Now().Add(patience.Bound(10 * time.Second))
	for {
		got := h.get()
		if len(got) > 0 && got[len(got)-1] == last {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("handled %v, waiting for %q", got, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPoller_NextRunStartsWhereTheLastStopped: a term that ends while its poller handles an update
// (the election lost just then: nothing has confirmed the update to Telegram yet) lets that update
// finish, with a live context, and leaves the rest of the batch to the next term; the next Run of
// the Poller (this process re-elected) starts after it, so every update is handled exactly once.
func TestPoller_NextRunStartsWhereTheLastStopped(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	u := providertest.TelegramUser{ID: 1, FirstName: "A"}
	fake.UserSends(u, "one")
	fake.UserSends(u, "two")
	var got handled
	term, endTerm := context.WithCancel(context.Background())
	var liveAfterEnd bool
	p := &telegram.Poller{API: telegram.NewAPI(tok, fake.URL(), loopback), Wait: time.Second,
		Handle: func(ctx context.Context, up telegram.Update) {
			if up.Message.Text == "one" {
				endTerm()
				liveAfterEnd = ctx.Err() == nil
			}
			got.add(up.Message.Text)
		}}
	p.Run(term) // returns once "one" is handled: the term ended during it
	if h := got.get(); !slices.Equal(h, []string{"one"}) || !liveAfterEnd {
		t.Fatalf("first term handled %v (its context live after the term ended: %v), want [one] to the end", h, liveAfterEnd)
	}

	term2, endTerm2 := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(term2) }()
	got.waitFor(t, "two")
	fake.UserSends(u, "three")
	h := got.waitFor(t, "three")
	endTerm2()
	<-done
	if !slices.Equal(h, []string{"one", "two", "three"}) {
		t.Fatalf("handled %v, want each update once, in order", h)
	}
}

// memOffsets is an Offsets shared by pollers of one process: what pgstate.Store is across replicas.
type memOffsets struct {
	mu    sync.Mutex
	saved map[string]int64
}

func (m *memOffsets) Offset(_ context.Context, bot string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saved[bot], nil
}

func (m *memOffsets) SaveOffset(_ context.Context, bot string, next int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saved[bot] = max(m.saved[bot], next)
	return nil
}

// TestPoller_SharedOffsetsHandOver: the next poller of the bot is another Poller (another
// replica's): through Offsets it starts after the update its predecessor handled and saved, and
// handles only the rest.
func TestPoller_SharedOffsetsHandOver(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	u := providertest.TelegramUser{ID: 1, FirstName: "A"}
	fake.UserSends(u, "one")
	fake.UserSends(u, "two")
	offsets := &memOffsets{saved: map[string]int64{}}
	var got handled
	var oneID int64
	term, endTerm := context.WithCancel(context.Background())
	first := &telegram.Poller{API: telegram.NewAPI(tok, fake.URL(), loopback), Wait: time.Second,
		Offsets: offsets, Bot: "555",
		Handle: func(_ context.Context, up telegram.Update) {
			oneID = up.UpdateID
			endTerm()
			got.add("first:" + up.Message.Text)
		}}
	first.Run(term)
	if saved, _ := offsets.Offset(context.Background(), "555"); saved != oneID+1 {
		t.Fatalf("saved offset %d after handling update %d, want %d", saved, oneID, oneID+1)
	}

	term2, endTerm2 := context.WithCancel(context.Background())
	defer endTerm2()
	second := &telegram.Poller{API: telegram.NewAPI(tok, fake.URL(), loopback), Wait: time.Second,
		Offsets: offsets, Bot: "555",
		Handle: func(_ context.Context, up telegram.Update) { got.add("second:" + up.Message.Text) }}
	done := make(chan struct{})
	go func() { defer close(done); second.Run(term2) }()
	h := got.waitFor(t, "second:two")
	endTerm2()
	<-done
	if strings.Join(h, ",") != "first:one,second:two" {
		t.Fatalf("handled %v, want one by the first poller and two by the second", h)
	}
}
