package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/provider/providertest"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

const botToken = "7000001:AAH-secret-bot-token_xyz"

// proxySaver is an avatar store that fetches the picture server-side, keeps the bytes and hands
// out its own URL, as the avatar proxy does.
type proxySaver struct {
	mu     sync.Mutex
	images map[string][]byte
}

func (p *proxySaver) Put(ctx context.Context, userID, pictureURL string) (string, error) {
	if pictureURL == "" {
		return "", nil
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, pictureURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	p.mu.Lock()
	p.images[userID] = b
	p.mu.Unlock()
	return "http://site.example/avatar/" + userID + ".image", nil
}

func addTelegram(t *testing.T, s *site, saver provider.AvatarSaver, ttl time.Duration) (*providertest.Telegram, *provider.TelegramHandler) {
	t.Helper()
	fake := providertest.NewTelegram(t, botToken, "triad_login_bot")
	p := s.params("", "")
	p.AvatarSaver = saver
	h, err := provider.NewTelegram(context.Background(), p, provider.TelegramConfig{
		SuccessMsg: "logged in", ErrorMsg: "expired",
		Telegram:   telegram.NewAPI(botToken, fake.URL(), loopback),
		RequestTTL: ttl, PollWait: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	return fake, h
}

type loginStart struct {
	Bot   string `json:"bot"`
	Token string `json:"token"`
}

func startTelegram(t *testing.T, s *site) (loginStart, string) {
	t.Helper()
	resp, body := s.get("/auth/telegram/login?site=web")
	var ls loginStart
	if resp.StatusCode != 200 || json.Unmarshal(body, &ls) != nil || ls.Token == "" {
		t.Fatalf("login start: %d %s", resp.StatusCode, body)
	}
	return ls, string(body)
}

// waitConfirmed polls the check endpoint as the web page does until it stops answering 404.
func waitConfirmed(t *testing.T, s *site, tok string) (*http.Response, []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body := s.get("/auth/telegram/login?token=" + tok)
		if resp.StatusCode != http.StatusNotFound || time.Now().After(deadline) {
			return resp, body
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTelegram_LoginFlow(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	saver := &proxySaver{images: map[string][]byte{}}
	fake, _ := addTelegram(t, s, saver, time.Minute)
	ls, raw := startTelegram(t, s)
	if ls.Bot != "triad_login_bot" {
		t.Fatalf("bot %q", ls.Bot)
	}
	if strings.Contains(raw, botToken) || strings.Contains(raw, "AAH-secret") {
		t.Fatal("the bot token reached the browser")
	}
	// Not confirmed yet: 404 with the JSON error.
	resp, body := s.get("/auth/telegram/login?token=" + ls.Token)
	if resp.StatusCode != http.StatusNotFound || errorBody(t, body) != provider.CodeNotConfirmed {
		t.Fatalf("unconfirmed: %d %s", resp.StatusCode, body)
	}
	photo := []byte("\x89PNG\r\n\x1a\nfake-image-bytes")
	fake.UserSends(providertest.TelegramUser{ID: 424242, FirstName: "Pavel", LastName: "Example", Username: "pavel", Photo: photo},
		"/start "+ls.Token)
	resp, body = waitConfirmed(t, s, ls.Token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirmed: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), botToken) {
		t.Fatal("the bot token reached the browser")
	}
	id := token.UserID("telegram", "424242")
	s.wantLoggedIn(token.User{ID: id, Name: "Pavel Example", Picture: "http://site.example/avatar/" + id + ".image"})
	saver.mu.Lock()
	got := string(saver.images[id])
	saver.mu.Unlock()
	if got != string(photo) {
		t.Fatalf("avatar bytes %q", got)
	}
	sent := fake.WaitSent(1, 2*time.Second)
	if len(sent) != 1 || sent[0] != (providertest.SentMessage{ChatID: 424242, Text: "logged in"}) {
		t.Fatalf("bot sent %+v", sent)
	}
	// The confirmation works once.
	resp, _ = s.get("/auth/telegram/login?token=" + ls.Token)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("second check: %d", resp.StatusCode)
	}
	resp, _ = s.get("/auth/telegram/logout")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	s.wantLoggedOut()
}

func TestTelegram_UnknownAndExpired(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake, _ := addTelegram(t, s, nil, 300*time.Millisecond)
	ls, _ := startTelegram(t, s)
	fake.UserSends(providertest.TelegramUser{ID: 1, FirstName: "Eve"}, "/start not-a-token")
	if sent := fake.WaitSent(1, 2*time.Second); len(sent) != 1 || sent[0].Text != "expired" {
		t.Fatalf("unknown token: bot sent %+v", sent)
	}
	time.Sleep(400 * time.Millisecond)
	fake.UserSends(providertest.TelegramUser{ID: 2, FirstName: "Late"}, "/start "+ls.Token)
	if sent := fake.WaitSent(2, 2*time.Second); len(sent) != 2 || sent[1] != (providertest.SentMessage{ChatID: 2, Text: "expired"}) {
		t.Fatalf("expired token: bot sent %+v", sent)
	}
	resp, body := s.get("/auth/telegram/login?token=" + ls.Token)
	if resp.StatusCode != http.StatusNotFound || errorBody(t, body) != provider.CodeNotConfirmed {
		t.Fatalf("expired check: %d %s", resp.StatusCode, body)
	}
	s.wantLoggedOut()
}

// TestTelegram_NoAvatarProxyNoPicture: without the avatar proxy the photo URL (which contains the
// bot token) must not become the user's picture.
func TestTelegram_NoAvatarProxyNoPicture(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake, _ := addTelegram(t, s, nil, time.Minute)
	ls, _ := startTelegram(t, s)
	fake.UserSends(providertest.TelegramUser{ID: 77, FirstName: "Ann", Photo: []byte("img")}, "/start "+ls.Token)
	resp, body := waitConfirmed(t, s, ls.Token)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), botToken) {
		t.Fatalf("confirmed: %d %s", resp.StatusCode, body)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("telegram", "77"), Name: "Ann"})
}

// TestTelegram_PollerSurvivesOutage: getUpdates failures are retried, not fatal.
func TestTelegram_PollerSurvivesOutage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake, _ := addTelegram(t, s, nil, time.Minute)
	fake.FailUpdates(true)
	ls, _ := startTelegram(t, s)
	time.Sleep(300 * time.Millisecond)
	fake.FailUpdates(false)
	fake.UserSends(providertest.TelegramUser{ID: 5, FirstName: "Bo"}, "/start "+ls.Token)
	resp, body := waitConfirmed(t, s, ls.Token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after outage: %d %s", resp.StatusCode, body)
	}
}

func TestTelegram_BadBotToken(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := providertest.NewTelegram(t, botToken, "bot")
	_, err := provider.NewTelegram(context.Background(), s.params("", ""), provider.TelegramConfig{
		Telegram: telegram.NewAPI("wrong-token", fake.URL(), loopback)})
	if err == nil {
		t.Fatal("registered with a wrong bot token")
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Fatalf("error leaks the token: %v", err)
	}
}

// TestTelegram_ConfirmationUsedOnce races many checks of one confirmed request: exactly one gets
// the session, the others 404.
func TestTelegram_ConfirmationUsedOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake, _ := addTelegram(t, s, nil, time.Minute)
	ls, _ := startTelegram(t, s)
	fake.UserSends(providertest.TelegramUser{ID: 9, FirstName: "Race"}, "/start "+ls.Token)
	if sent := fake.WaitSent(1, 3*time.Second); len(sent) != 1 || sent[0].Text != "logged in" {
		t.Fatalf("bot sent %+v", sent)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := s.newBrowser()
			resp, err := b.Get(s.URL + "/auth/telegram/login?token=" + ls.Token)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[http.StatusOK] != 1 || counts[http.StatusNotFound] != 19 {
		t.Fatalf("statuses %v, want one 200 and nineteen 404", counts)
	}
}

// TestTelegram_SecondStartIsRefused: a request confirmed by one Telegram user cannot be taken over
// by another who learned the token.
func TestTelegram_SecondStartIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake, _ := addTelegram(t, s, nil, time.Minute)
	ls, _ := startTelegram(t, s)
	fake.UserSends(providertest.TelegramUser{ID: 10, FirstName: "Owner"}, "/start "+ls.Token)
	fake.UserSends(providertest.TelegramUser{ID: 11, FirstName: "Thief"}, "/start "+ls.Token)
	sent := fake.WaitSent(2, 3*time.Second)
	if len(sent) != 2 || sent[0] != (providertest.SentMessage{ChatID: 10, Text: "logged in"}) || sent[1] != (providertest.SentMessage{ChatID: 11, Text: "expired"}) {
		t.Fatalf("bot sent %+v", sent)
	}
	resp, _ := waitConfirmed(t, s, ls.Token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("check: %d", resp.StatusCode)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("telegram", "10"), Name: "Owner"})
}

// TestTelegram_ProviderName: the handler lives under its ProviderName, and its users' ids carry
// that name, so two bots (or a renamed one) never share user ids.
func TestTelegram_ProviderName(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	fake := providertest.NewTelegram(t, botToken, "corp_login_bot")
	h, err := provider.NewTelegram(context.Background(), s.params("", ""), provider.TelegramConfig{
		ProviderName: "corp-tg", Telegram: telegram.NewAPI(botToken, fake.URL(), loopback), PollWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.AddCustomHandler(h); err != nil {
		t.Fatal(err)
	}
	resp, body := s.get("/auth/corp-tg/login")
	var ls loginStart
	if resp.StatusCode != 200 || json.Unmarshal(body, &ls) != nil || ls.Bot != "corp_login_bot" || ls.Token == "" {
		t.Fatalf("login start: %d %s", resp.StatusCode, body)
	}
	fake.UserSends(providertest.TelegramUser{ID: 8, FirstName: "Kit"}, "/start "+ls.Token)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body = s.get("/auth/corp-tg/login?token=" + ls.Token)
		if resp.StatusCode != http.StatusNotFound || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirmed: %d %s", resp.StatusCode, body)
	}
	s.wantLoggedIn(token.User{ID: token.UserID("corp-tg", "8"), Name: "Kit"})
	// The default success message is sent when none is configured.
	if sent := fake.WaitSent(1, 2*time.Second); len(sent) != 1 || sent[0].Text != provider.DefaultTelegramSuccessMsg {
		t.Fatalf("bot sent %+v", sent)
	}
}
