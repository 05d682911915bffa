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
	"sync/atomic"
	"time"

	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/logger"
	"github.com/triadhq/triad/impl/surfaces/auth/telegram"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
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
	// Logins keeps the pending logins; default in memory (one process). Replicas share them
	// through PostgreSQL (package pgstate), so a login started on one completes on another.
	Logins TelegramLogins
	// Leader elects the one process that polls the bot (the Bot API allows one poller per bot);
	// default AlwaysLeader (this process polls). Replicas elect one through PostgreSQL (pgstate.Leader).
	Leader Leader
	// Offsets keeps the poller's getUpdates offset, so the next poller elected (on this process or
	// another) starts after the updates already handled instead of answering them again; default
	// the poller's own memory (this process's successive terms). Replicas share it through
	// PostgreSQL (pgstate.Store).
	Offsets telegram.Offsets
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
//
// It is built either by NewTelegram (triad's way: the service's Params and a TelegramConfig; it
// polls by itself) or, the seed's way (go-pkgz/auth's), as a struct literal of the exported fields
// below, started with Run and registered with the service's AddCustomHandler (seed.go).
type TelegramHandler struct {
	Params
	// The seed's fields (auth-service.md, "Messenger provider handler"). NewTelegram fills them from
	// its arguments; a handler built as a literal sets them and calls Run.

	// ProviderName is the provider's unique name; default "telegram".
	ProviderName string
	// SuccessMsg is sent to the user when the login is confirmed; ErrorMsg when the login request
	// is unknown or expired. Defaults DefaultTelegramSuccessMsg and DefaultTelegramErrorMsg.
	SuccessMsg, ErrorMsg string
	// Telegram is the messenger API, built from the bot's secret token and an HTTP client
	// (NewTelegramAPI, or telegram.NewAPI).
	Telegram *telegram.API
	// L is the seed's logger: any value with Logf (logger.Std, logger.Func(f), logger.FromSlog(s), a type of
	// your own); nil passes warnings and errors to the standard log (logger.Errors), logger.NoOp nothing.
	L logger.L
	// TokenService issues the session (the service's TokenService()).
	TokenService TokenService
	// AvatarSaver stores the user's picture (the service's AvatarProxy()); nil keeps none.
	AvatarSaver AvatarSaver

	conf    TelegramConfig
	botName string
	stop    context.CancelFunc
	done    chan struct{}
	// ready is set once the fields above and conf are final (NewTelegram's return, or Run's start):
	// until then the handlers answer 503, and after it they only read.
	ready atomic.Bool
}

// NewTelegram asks the Bot API for the bot's name (which also proves the token) and starts polling
// for updates whenever its Leader elects this process. Close stops the poller.
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
	if c.Logins == nil {
		c.Logins = NewMemoryTelegramLogins()
	}
	if c.Leader == nil {
		c.Leader = AlwaysLeader{}
	}
	h := &TelegramHandler{Params: p, conf: c, botName: me.Username, done: make(chan struct{}),
		ProviderName: c.ProviderName, SuccessMsg: c.SuccessMsg, ErrorMsg: c.ErrorMsg, Telegram: c.Telegram,
		TokenService: p.JwtService, AvatarSaver: p.AvatarSaver}
	h.ready.Store(true)
	// One Poller for every term: it keeps the offset between them, and Offsets shares it with
	// the other replicas' pollers, keyed by the bot's id.
	poller := &telegram.Poller{API: c.Telegram, Handle: h.handleUpdate, Wait: c.PollWait, Log: p.log(),
		Offsets: c.Offsets, Bot: strconv.FormatInt(me.ID, 10)}
	pctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	go func() {
		defer close(h.done)
		c.Leader.Lead(pctx, poller.Run)
	}()
	return h, nil
}

// Name is the configured provider name.
func (h *TelegramHandler) Name() string {
	if h.ProviderName == "" {
		return TelegramName
	}
	return h.ProviderName
}

// BotName is the bot's username ("" until Run has asked the API for it).
func (h *TelegramHandler) BotName() string {
	if !h.ready.Load() {
		return ""
	}
	return h.botName
}

// Close stops the background poller NewTelegram started (and gives up the election, so another
// process takes over). A handler started with Run stops when Run's context ends.
func (h *TelegramHandler) Close() error {
	if h.stop != nil {
		h.stop()
		<-h.done
	}
	return nil
}

// notReady answers 503 while a handler built as a literal waits for Run; it reports whether it did.
func (h *TelegramHandler) notReady(w http.ResponseWriter, r *http.Request) bool {
	if h.ready.Load() {
		return false
	}
	w.Header().Set("Retry-After", "1")
	WriteError(w, r, http.StatusServiceUnavailable, CodeNotStarted, "the messenger provider has not started yet")
	return true
}

// telegramLogin is the body of GET /login without a token.
type telegramLogin struct {
	Status string `json:"status"` // always StatusPending
	Bot    string `json:"bot"`
	Token  string `json:"token"`
}

// LoginHandler without ?token starts a request; with ?token checks it (404 until confirmed).
func (h *TelegramHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	if h.notReady(w, r) {
		return
	}
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
		l := TelegramLogin{Aud: aud, Session: token.IsSessionRequest(r), Expires: time.Now().Add(h.conf.RequestTTL)}
		if err := h.conf.Logins.Start(r.Context(), tok, l); err != nil {
			web.Internal(w, r, fmt.Errorf("telegram: start a login: %w", err))
			return
		}
		web.WriteJSON(w, http.StatusOK, telegramLogin{Status: StatusPending, Bot: h.botName, Token: tok})
		return
	}
	req, confirmed, err := h.conf.Logins.Take(r.Context(), tok)
	if err != nil {
		web.Internal(w, r, fmt.Errorf("telegram: complete a login: %w", err))
		return
	}
	if !confirmed {
		WriteError(w, r, http.StatusNotFound, CodeNotConfirmed, "the login request is not confirmed (yet), or is unknown or expired")
		return
	}
	Finish(w, r, h.Params, h.Name(), LoginResult{User: *req.User, Aud: req.Aud, Session: req.Session || token.IsSessionRequest(r)})
}

// AuthHandler is not used: confirmation arrives through the bot.
func (h *TelegramHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "this provider has no callback")
}

// LogoutHandler clears the session cookies.
func (h *TelegramHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	// Clearing cookies needs nothing Run sets up, so a logout works before it too.
	Logout(w, h.TokenService)
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
	if pending, err := h.conf.Logins.Pending(ctx, arg); err != nil || !pending {
		if err != nil {
			h.log().ErrorContext(ctx, "telegram: pending logins", "err", err)
		}
		h.send(ctx, m.Chat.ID, h.ErrorMsg)
		return
	}
	// The photo URL carries the bot token, so it is only used when the avatar proxy fetches and
	// re-serves the image; without a proxy the user gets no picture rather than a leaked token.
	if h.AvatarSaver != nil {
		pic, err := h.Telegram.UserPhotoURL(ctx, m.From.ID)
		if err != nil {
			h.log().WarnContext(ctx, "telegram: profile photo of a user", "err", err)
		}
		user.Picture = pic
	}
	confirmed, err := h.conf.Logins.Confirm(ctx, arg, user)
	if err != nil {
		h.log().ErrorContext(ctx, "telegram: confirm a login", "err", err)
	}
	if !confirmed {
		h.send(ctx, m.Chat.ID, h.ErrorMsg)
		return
	}
	h.send(ctx, m.Chat.ID, h.SuccessMsg)
}

func (h *TelegramHandler) send(ctx context.Context, chatID int64, text string) {
	if err := h.Telegram.SendMessage(ctx, chatID, text); err != nil {
		h.log().WarnContext(ctx, "telegram: sendMessage", "err", err)
	}
}
