package telegram_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
)

const tok = "555:secret-bot-token"

// loopback is the tests' explicit opt-out of the outbound address guard: the fake Bot API is
// an httptest server on 127.0.0.1, which the default guarded client refuses.
var loopback = outbound.New(outbound.Options{AllowPrivate: true})

func TestAPI_GetMeAndSend(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	api := telegram.NewAPI(tok, fake.URL(), loopback)
	ctx := context.Background()
	me, err := api.GetMe(ctx)
	if err != nil || me.Username != "some_bot" || !me.IsBot {
		t.Fatalf("getMe: %+v %v", me, err)
	}
	if err := api.SendMessage(ctx, 42, "hi"); err != nil {
		t.Fatal(err)
	}
	if s := fake.Sent(); len(s) != 1 || s[0] != (providertest.SentMessage{ChatID: 42, Text: "hi"}) {
		t.Fatalf("sent %+v", s)
	}
	var apiErr *telegram.APIError
	if err := api.SendMessage(ctx, 42, ""); !errors.As(err, &apiErr) || apiErr.Code != 400 {
		t.Fatalf("empty text: %v", err)
	}
}

// TestAPI_ErrorsHideToken: neither an API refusal nor a network failure puts the token (part of
// every Bot API URL) into the error text, which ends up in logs.
func TestAPI_ErrorsHideToken(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	_, err := telegram.NewAPI("555:wrong-token", fake.URL(), loopback).GetMe(context.Background())
	var apiErr *telegram.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 401 || strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("wrong token: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = telegram.NewAPI(tok, "http://"+addr, loopback).GetMe(context.Background())
	if err == nil || strings.Contains(err.Error(), "secret-bot-token") {
		t.Fatalf("network failure: %v", err)
	}
}

func TestAPI_UserPhotoURL(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	api := telegram.NewAPI(tok, fake.URL(), loopback)
	fake.UserSends(providertest.TelegramUser{ID: 7, FirstName: "P", Photo: []byte("jpeg")}, "hello")
	u, err := api.UserPhotoURL(context.Background(), 7)
	if err != nil || !strings.HasPrefix(u, fake.URL()+"/file/bot"+tok+"/") || !strings.Contains(u, "-m-") {
		t.Fatalf("photo url %q %v (want the 160 px size)", u, err)
	}
	if u, err := api.UserPhotoURL(context.Background(), 8); err != nil || u != "" {
		t.Fatalf("no photo: %q %v", u, err)
	}
}

// TestPoller_DeliversInOrderOnceAndStops: every update reaches Handle once, in order, across
// several long polls; Stop returns promptly even in the middle of a long poll.
func TestPoller_DeliversInOrderOnceAndStops(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	var mu sync.Mutex
	var got []string
	p := &telegram.Poller{API: telegram.NewAPI(tok, fake.URL(), loopback), Wait: 2 * time.Second,
		Handle: func(_ context.Context, u telegram.Update) {
			mu.Lock()
			got = append(got, u.Message.Text)
			mu.Unlock()
		}}
	p.Start()
	p.Start() // a second Start is a no-op
	u := providertest.TelegramUser{ID: 1, FirstName: "A"}
	for _, txt := range []string{"one", "two"} {
		fake.UserSends(u, txt)
	}
	time.Sleep(100 * time.Millisecond)
	fake.UserSends(u, "three")
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	p.Stop()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Stop took %v", d)
	}
	p.Stop() // idempotent
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "one,two,three" {
		t.Fatalf("handled %v", got)
	}
}

// TestPoller_LogsFailures: a failing getUpdates is logged (without the bot token) and retried, and
// polling resumes once the Bot API answers again.
func TestPoller_LogsFailures(t *testing.T) {
	t.Parallel()
	fake := providertest.NewTelegram(t, tok, "some_bot")
	fake.FailUpdates(true)
	var logw lockedBuffer
	handled := make(chan string, 1)
	p := &telegram.Poller{API: telegram.NewAPI(tok, fake.URL(), loopback), Wait: time.Second,
		Handle: func(_ context.Context, u telegram.Update) { handled <- u.Message.Text },
		Log:    slog.New(slog.NewTextHandler(&logw, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	p.Start()
	defer p.Stop()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := len(logw.String())
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	logged := logw.String()
	if !strings.Contains(logged, "getUpdates") || strings.Contains(logged, "secret-bot-token") {
		t.Fatalf("log %q: want the getUpdates failure, without the token", logged)
	}
	fake.FailUpdates(false)
	fake.UserSends(providertest.TelegramUser{ID: 1, FirstName: "A"}, "after outage")
	select {
	case got := <-handled:
		if got != "after outage" {
			t.Fatalf("handled %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("polling did not resume after the outage")
	}
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
