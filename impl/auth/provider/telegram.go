package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/auth/telegram"
	"github.com/triadhq/triad/impl/auth/token"
	"github.com/triadhq/triad/impl/web"
)

// TelegramConfig configures the messenger provider.
type TelegramConfig struct {
	// ProviderName is the provider's unique name; default "telegram".
	ProviderName string
	// SuccessMsg is sent to the user when the login is confirmed.
	SuccessMsg string
	// ErrorMsg is sent when the /start token is unknown or expired.
	ErrorMsg string
	// Telegram is the Bot API client, built from the bot token and an HTTP client
	// (telegram.NewAPI). Required.
	Telegram *telegram.API
	// RequestTTL is how long a login request waits for the user; default 10 minutes.
	RequestTTL time.Duration
	// PollWait is the getUpdates long-poll timeout; default 30 s.
	PollWait time.Duration
}

// Defaults of TelegramConfig.
const (
	DefaultTelegramSuccessMsg = "✅ You have successfully authenticated, check the web!"
	DefaultTelegramErrorMsg   = "❌ Error: this login request is unknown or has expired. Start the login again on the web."
	DefaultTelegramRequestTTL = 10 * time.Minute
)

// CodeNotConfirmed is the error code of a messenger login check the user has not confirmed (yet).
const CodeNotConfirmed = "not_confirmed"

// TelegramHandler is the messenger provider. GET /login hands out a request token and the bot's
// name; the user opens t.me/<bot>?start=<token> and presses Start, which sends "/start <token>" to
// the bot; a background poller sees it and confirms the request; GET /login?token=<token> then
// sets the session. The bot token stays on the server: the browser only ever sees the bot's name
// and the request token.
type TelegramHandler struct {
	Params
	conf    TelegramConfig
	botName string
	poller  *telegram.Poller

	mu       sync.Mutex
	requests map[string]*tgRequest
}

type tgRequest struct {
	expires time.Time
	aud     string
	session bool
	user    *token.User // set once confirmed
}

// NewTelegram asks the Bot API for the bot's name (which also proves the token) and starts polling
// for updates. Close stops the poller.
func NewTelegram(ctx context.Context, p Params, c TelegramConfig) (*TelegramHandler, error) {
	if c.Telegram == nil {
		return nil, errors.New("telegram: the Bot API client is required")
	}
	if c.ProviderName == "" {
		c.ProviderName = TelegramName
	}
	if c.SuccessMsg == "" {
		c.SuccessMsg = DefaultTelegramSuccessMsg
	}
	if c.ErrorMsg == "" {
		c.ErrorMsg = DefaultTelegramErrorMsg
	}
	if c.RequestTTL <= 0 {
		c.RequestTTL = DefaultTelegramRequestTTL
	}
	me, err := c.Telegram.GetMe(ctx)
	if err != nil {
		return nil, fmt.Errorf("telegram: getMe: %w", err)
	}
	if me.Username == "" {
		return nil, errors.New("telegram: the bot has no username")
	}
	h := &TelegramHandler{Params: p, conf: c, botName: me.Username, requests: map[string]*tgRequest{}}
	h.poller = &telegram.Poller{API: c.Telegram, Handle: h.handleUpdate, Wait: c.PollWait, Log: p.L}
	h.poller.Start()
	return h, nil
}

// Name is the configured provider name.
func (h *TelegramHandler) Name() string { return h.conf.ProviderName }

// BotName is the bot's username.
func (h *TelegramHandler) BotName() string { return h.botName }

// Close stops the background poller.
func (h *TelegramHandler) Close() error { h.poller.Stop(); return nil }

// telegramLogin is the body of GET /login without a token.
type telegramLogin struct {
	Bot   string `json:"bot"`
	Token string `json:"token"`
}

// LoginHandler without ?token starts a request; with ?token checks it (404 until confirmed).
func (h *TelegramHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tok := q.Get("token")
	if tok == "" {
		aud := q.Get("site")
		if !h.JwtService.AllowedAudience(aud) {
			WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
			return
		}
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		tok = hex.EncodeToString(b) // 32 chars of [0-9a-f]: fits Telegram's 64-char start parameter
		h.mu.Lock()
		h.gcLocked()
		if len(h.requests) >= maxTelegramRequests {
			h.evictOldestLocked()
		}
		h.requests[tok] = &tgRequest{expires: time.Now().Add(h.conf.RequestTTL), aud: aud, session: token.IsSessionRequest(r)}
		h.mu.Unlock()
		web.WriteJSON(w, http.StatusOK, telegramLogin{Bot: h.botName, Token: tok})
		return
	}
	h.mu.Lock()
	req, ok := h.requests[tok]
	confirmed := ok && req.user != nil && time.Now().Before(req.expires)
	if confirmed {
		delete(h.requests, tok) // one login per confirmation
	}
	h.mu.Unlock()
	if !confirmed {
		WriteError(w, r, http.StatusNotFound, CodeNotConfirmed, "the login request is not confirmed (yet), or is unknown or expired")
		return
	}
	Finish(w, r, h.Params, h.Name(), LoginResult{User: *req.user, Aud: req.aud, Session: req.session || token.IsSessionRequest(r)})
}

// AuthHandler is not used: confirmation arrives through the bot.
func (h *TelegramHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "this provider has no callback")
}

// LogoutHandler clears the session cookies.
func (h *TelegramHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	Logout(w, h.JwtService)
}

// handleUpdate confirms a request on "/start <token>" and answers the user either way.
func (h *TelegramHandler) handleUpdate(ctx context.Context, u telegram.Update) {
	m := u.Message
	if m == nil || m.From == nil || m.From.IsBot || m.Chat.Type != "private" {
		return
	}
	cmd, arg, _ := strings.Cut(strings.TrimSpace(m.Text), " ")
	if cmd != "/start" {
		return
	}
	arg = strings.TrimSpace(arg)
	user := token.User{ID: strconv.FormatInt(m.From.ID, 10), Name: m.From.DisplayName()}
	if !h.pending(arg) {
		h.send(ctx, m.Chat.ID, h.conf.ErrorMsg)
		return
	}
	// The photo URL carries the bot token, so it is only used when the avatar proxy fetches and
	// re-serves the image; without a proxy the user gets no picture rather than a leaked token.
	if h.AvatarSaver != nil {
		pic, err := h.conf.Telegram.UserPhotoURL(ctx, m.From.ID)
		if err != nil {
			h.log().Logf("[WARN] telegram: profile photo of a user: %v", err)
		}
		user.Picture = pic
	}
	h.mu.Lock()
	req, ok := h.requests[arg]
	confirmed := ok && req.user == nil && time.Now().Before(req.expires)
	if confirmed {
		req.user = &user
	}
	h.mu.Unlock()
	if !confirmed {
		h.send(ctx, m.Chat.ID, h.conf.ErrorMsg)
		return
	}
	h.send(ctx, m.Chat.ID, h.conf.SuccessMsg)
}

func (h *TelegramHandler) send(ctx context.Context, chatID int64, text string) {
	if err := h.conf.Telegram.SendMessage(ctx, chatID, text); err != nil {
		h.log().Logf("[WARN] telegram: sendMessage: %v", err)
	}
}

// pending reports whether tok is a live, unconfirmed request; an expired one is dropped.
func (h *TelegramHandler) pending(tok string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	req, ok := h.requests[tok]
	if ok && !time.Now().Before(req.expires) {
		delete(h.requests, tok)
		return false
	}
	return ok && req.user == nil
}

// maxTelegramRequests bounds the pending login requests: anyone can open them, so without a bound
// a flood of GET /login would grow memory for the whole RequestTTL.
const maxTelegramRequests = 10000

// evictOldestLocked drops the request closest to expiry to make room for a new one.
func (h *TelegramHandler) evictOldestLocked() {
	var oldest string
	var at time.Time
	for k, r := range h.requests {
		if oldest == "" || r.expires.Before(at) {
			oldest, at = k, r.expires
		}
	}
	delete(h.requests, oldest)
}

// gcLocked drops expired requests so abandoned logins do not accumulate.
func (h *TelegramHandler) gcLocked() {
	now := time.Now()
	for k, r := range h.requests {
		if !now.Before(r.expires) {
			delete(h.requests, k)
		}
	}
}
