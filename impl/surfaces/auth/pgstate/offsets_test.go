package pgstate_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestStore_OffsetNeverMovesBack: a bot's offset is shared by replicas, per bot; a lower offset
// (a late poller's) does not undo a higher one; one saved longer than telegram.OffsetTTL ago is
// neither read nor kept against a lower one.
func TestStore_OffsetNeverMovesBack(t *testing.T) {
	t.Parallel()
	pools := replicaPools(t, 2)
	a, b := newStore(t, pools[0]), newStore(t, pools[1])
	ctx := context.Background()
	read := func(s *pgstate.Store, bot string) int64 {
		t.Helper()
		n, err := s.Offset(ctx, bot)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	save := func(s *pgstate.Store, bot string, next int64) {
		t.Helper()
		if err := s.SaveOffset(ctx, bot, next); err != nil {
			t.Fatal(err)
		}
	}
	if n := read(a, "1"); n != 0 {
		t.Fatalf("offset of a bot never polled: %d", n)
	}
	save(a, "1", 500)
	if n := read(b, "1"); n != 500 {
		t.Fatalf("offset on the other replica: %d, want 500", n)
	}
	save(b, "1", 400)
	if n := read(a, "1"); n != 500 {
		t.Fatalf("after a lower save: %d, want 500 kept", n)
	}
	save(b, "1", 501)
	save(a, "2", 7)
	if n1, n2 := read(a, "1"), read(b, "2"); n1 != 501 || n2 != 7 {
		t.Fatalf("offsets %d and %d, want 501 and 7 (one per bot)", n1, n2)
	}
	// A day without updates: Telegram has dropped every update the offset confirmed, and after a
	// week numbers new ones at random, possibly below it.
	if _, err := pools[0].Exec(ctx, "UPDATE auth_telegram_offsets SET saved_at = now() - interval '25 hours' WHERE bot = '1'"); err != nil {
		t.Fatal(err)
	}
	if n := read(a, "1"); n != 0 {
		t.Fatalf("an offset older than OffsetTTL read as %d, want 0", n)
	}
	save(a, "1", 30)
	if n1, n2 := read(b, "1"), read(b, "2"); n1 != 30 || n2 != 7 {
		t.Fatalf("after a save over an old offset: %d (want 30) and %d (want 7)", n1, n2)
	}
}

// endable is a replica's election that the test ends when it chooses, as the replica stopping or
// losing its lock does: its poller's term ends then.
type endable struct {
	*pgstate.Leader
	mu  sync.Mutex
	end context.CancelFunc
}

func (e *endable) Lead(ctx context.Context, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	e.end = cancel
	e.mu.Unlock()
	e.Leader.Lead(ctx, fn)
}

func (e *endable) End() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.end != nil {
		e.end()
	}
}

// afterSend calls fn once a sendMessage has been answered, before the poller goes on.
type afterSend struct {
	base http.RoundTripper
	fn   func()
}

func (a afterSend) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/sendMessage") {
		a.fn()
	}
	return resp, err
}

// TestTelegram_NextPollerDoesNotAnswerAgain: the poller's term ends the moment it has answered a
// login, before any getUpdates has confirmed that update to Telegram (which therefore delivers it
// again); the next poller, another replica's, starts after it through the shared offset, so the
// user gets one answer ("logged in"), not a second one ("expired").
func TestTelegram_NextPollerDoesNotAnswerAgain(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, botToken, "triad_login_bot")
	pools := replicaPools(t, 2)
	var electA *endable
	var once sync.Once
	client := outbound.New(outbound.Options{AllowPrivate: true})
	client.Transport = afterSend{base: client.Transport, fn: func() { once.Do(electA.End) }}
	a := newReplicaWith(t, pools[0], fake, func(l *pgstate.Leader) provider.Leader {
		electA = &endable{Leader: l}
		return electA
	}, client)
	tok := a.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 10, FirstName: "Ann"}, "/start "+tok)
	a.complete(t, tok)

	b := newReplica(t, pools[1], fake)
	tok = b.start(t)
	fake.UserSends(providertest.TelegramUser{ID: 11, FirstName: "Bob"}, "/start "+tok)
	if u := b.complete(t, tok); u.Name != "Bob" {
		t.Fatalf("login polled by b: user %+v", u)
	}
	// b handles the updates in order: an answer to Ann's again would come before Bob's.
	sent := fake.WaitSent(2, patience.Bound(5*time.Second))
	want := []providertest.SentMessage{{ChatID: 10, Text: "logged in"}, {ChatID: 11, Text: "logged in"}}
	if !slices.Equal(sent, want) {
		t.Fatalf("bot sent %+v, want %+v", sent, want)
	}
}
