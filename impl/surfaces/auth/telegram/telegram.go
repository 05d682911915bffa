// Package telegram is a minimal Telegram Bot API client (getMe, getUpdates long polling,
// sendMessage, getUserProfilePhotos, getFile) and a background poller that hands each update to a
// callback. The messenger login provider builds on it.
//
// The bot token is part of every Bot API URL (https://api.telegram.org/bot<token>/<method>), so
// those URLs are server-to-server only: errors returned here never include them, and file URLs are
// only handed to code that fetches them server-side.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/kit/outbound"
)

// DefaultBaseURL is the public Bot API server.
const DefaultBaseURL = "https://api.telegram.org"

// User is a Telegram user as the Bot API describes it.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// DisplayName is "First Last", or the username when the names are empty.
func (u User) DisplayName() string {
	n := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if n == "" {
		return u.Username
	}
	return n
}

// Chat is the chat a message belongs to.
type Chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

// Message is an incoming message.
type Message struct {
	MessageID int64  `json:"message_id"`
	From      *User  `json:"from,omitempty"`
	Chat      Chat   `json:"chat"`
	Date      int64  `json:"date"`
	Text      string `json:"text,omitempty"`
}

// Update is one item of getUpdates.
type Update struct {
	UpdateID int64    `json:"update_id"`
	Message  *Message `json:"message,omitempty"`
}

// APIError is a Bot API refusal ({"ok":false,...}).
type APIError struct {
	Method      string
	Code        int
	Description string
}

// Error reports the method, code and description; the bot token is never part of it.
func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// API calls the Bot API for one bot.
type API struct {
	token   string
	baseURL string
	client  *http.Client
}

// defaultClient is the guarded client of package outbound, with a timeout longer than the
// long-poll wait; the Bot API never redirects.
var defaultClient = outbound.New(outbound.Options{Timeout: ClientTimeout})

// ClientTimeout bounds one Bot API call: longer than the longest long-poll wait.
const ClientTimeout = 70 * time.Second

// NewAPI returns a client for the bot with this token. baseURL "" means DefaultBaseURL; client nil
// means the guarded client of package outbound (public addresses only; tests on loopback pass one
// with AllowPrivate), with a timeout longer than the long-poll wait.
func NewAPI(token, baseURL string, client *http.Client) *API {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if client == nil {
		client = defaultClient
	}
	return &API{token: token, baseURL: strings.TrimSuffix(baseURL, "/"), client: client}
}

// call posts params as JSON to method and decodes result into out.
func (a *API) call(ctx context.Context, method string, params any, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.baseURL+"/bot"+a.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telegram %s: building request", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		// *url.Error carries the URL, and with it the token: report only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("telegram %s: %w", method, err)
	}
	defer resp.Body.Close()
	var env struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&env); err != nil {
		return fmt.Errorf("telegram %s: status %d, undecodable body", method, resp.StatusCode)
	}
	if !env.OK {
		return &APIError{Method: method, Code: env.ErrorCode, Description: env.Description}
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return fmt.Errorf("telegram %s: decoding result: %w", method, err)
		}
	}
	return nil
}

// GetMe returns the bot's own user (its Username is what users open in the app).
func (a *API) GetMe(ctx context.Context) (User, error) {
	var u User
	err := a.call(ctx, "getMe", struct{}{}, &u)
	return u, err
}

// GetUpdates long-polls for updates with id >= offset, waiting up to timeout.
func (a *API) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]Update, error) {
	var ups []Update
	err := a.call(ctx, "getUpdates", map[string]any{"offset": offset, "timeout": int(timeout / time.Second),
		"allowed_updates": []string{"message"}}, &ups)
	return ups, err
}

// SendMessage sends a text message to a chat.
func (a *API) SendMessage(ctx context.Context, chatID int64, text string) error {
	return a.call(ctx, "sendMessage", map[string]any{"chat_id": chatID, "text": text}, nil)
}

// UserPhotoURL returns the download URL of the user's current profile photo (smallest size that
// is at least 100 px wide, else the largest), or "" when the user has none. The URL contains the
// bot token: fetch it server-side only, never show it to the user.
func (a *API) UserPhotoURL(ctx context.Context, userID int64) (string, error) {
	var photos struct {
		TotalCount int `json:"total_count"`
		Photos     [][]struct {
			FileID string `json:"file_id"`
			Width  int    `json:"width"`
		} `json:"photos"`
	}
	if err := a.call(ctx, "getUserProfilePhotos", map[string]any{"user_id": userID, "limit": 1}, &photos); err != nil {
		return "", err
	}
	if len(photos.Photos) == 0 || len(photos.Photos[0]) == 0 {
		return "", nil
	}
	sizes := photos.Photos[0]
	pick := sizes[len(sizes)-1].FileID
	for _, s := range sizes {
		if s.Width >= 100 {
			pick = s.FileID
			break
		}
	}
	var file struct {
		FilePath string `json:"file_path"`
	}
	if err := a.call(ctx, "getFile", map[string]any{"file_id": pick}, &file); err != nil {
		return "", err
	}
	if file.FilePath == "" {
		return "", nil
	}
	return a.baseURL + "/file/bot" + a.token + "/" + file.FilePath, nil
}

// OffsetTTL is how long a saved offset counts. Telegram keeps an update at most 24 hours, so an
// offset saved earlier confirms nothing that is still queued; and after a week without updates
// Telegram picks the next update id at random, possibly below an old offset, which would then drop
// it. A poller therefore asks for "the earliest unconfirmed update" (offset 0) once its offset is
// older than this, and a store replaces such an offset rather than keeping the larger one.
const OffsetTTL = 24 * time.Hour

// Offsets keeps where a bot's polling stands (the getUpdates offset: the id of the last handled
// update + 1), so that the next poller of the bot, after a re-election on this process or on
// another replica, starts after the updates its predecessor handled instead of handling them again.
// Implementations are safe for concurrent use (pgstate.Store shares it through PostgreSQL).
type Offsets interface {
	// Offset returns the offset saved for bot within OffsetTTL, or 0 when there is none.
	Offset(ctx context.Context, bot string) (int64, error)
	// SaveOffset records next for bot. An offset never moves back: a lower next than the one
	// saved within OffsetTTL is ignored (a late poller cannot undo a newer one's progress).
	SaveOffset(ctx context.Context, bot string, next int64) error
}

// finishWithin bounds the handling of an update the poller has begun once its context ends: the
// update is handled to the end (its answer sent, its offset saved) rather than cut off midway,
// for at most this long, so Stop and a lost election wait at most this long for it.
const finishWithin = 30 * time.Second

// Poller fetches updates in the background and hands each to Handle, in order. It keeps its offset
// between runs, so a Run after another (a re-election) goes on where the last one stopped; with
// Offsets, every poller of the bot shares it.
type Poller struct {
	API *API
	// Handle is called for every update; it runs on the poller's goroutine. An update Handle has
	// begun is finished even when the poller's context ends meanwhile: Handle's context then lives
	// on for up to 30 s, and the update is recorded as handled once Handle returns.
	Handle func(ctx context.Context, u Update)
	// Wait is the long-poll timeout; default 30 s.
	Wait time.Duration
	// Log receives getUpdates failures (never the token: errors of this package leave it out), so
	// an operator learns why logins stall, e.g. a 409 when a webhook is set or another process polls
	// the same bot; nil discards them.
	Log *slog.Logger
	// Offsets, when set, shares the offset with the other pollers of the bot (replicas electing
	// one poller); each run starts from the larger of the saved offset and this Poller's own, and
	// each handled update is saved. nil keeps the offset in this Poller only.
	Offsets Offsets
	// Bot names the bot in Offsets: its user id, as getMe reports it (never the token's secret).
	Bot string

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	offMu  sync.Mutex
	next   int64     // the offset: the last handled update's id + 1
	nextAt time.Time // when next was set; older than OffsetTTL, it no longer counts
}

// Start begins polling in a goroutine; Stop ends it. Starting twice is a no-op.
func (p *Poller) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		p.run(ctx)
	}()
}

// Stop ends polling and waits for the goroutine to exit (and so for an update being handled).
func (p *Poller) Stop() {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel = nil
	p.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Run polls until ctx ends: the blocking form of Start, for callers that decide when this process
// polls (an election among replicas). Runs one after another go on from the same offset; two
// Runs of one Poller at once are not supported.
func (p *Poller) Run(ctx context.Context) { p.run(ctx) }

// offset is the offset to ask getUpdates for: 0 (the earliest unconfirmed update) when none was
// set within OffsetTTL.
func (p *Poller) offset() int64 {
	p.offMu.Lock()
	defer p.offMu.Unlock()
	if time.Since(p.nextAt) >= OffsetTTL {
		return 0
	}
	return p.next
}

// advance moves the offset to next, never back while the current one counts.
func (p *Poller) advance(next int64) {
	if next <= 0 {
		return
	}
	p.offMu.Lock()
	defer p.offMu.Unlock()
	if next > p.next || time.Since(p.nextAt) >= OffsetTTL {
		p.next, p.nextAt = next, time.Now()
	}
}

func (p *Poller) run(ctx context.Context) {
	wait := p.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// With shared offsets, a run first learns where the bot's last poller stopped.
	loaded := p.Offsets == nil
	backoff := 500 * time.Millisecond
	for ctx.Err() == nil {
		var ups []Update
		var err error
		if !loaded {
			var saved int64
			if saved, err = p.Offsets.Offset(ctx, p.Bot); err == nil {
				p.advance(saved)
				loaded = true
			}
		}
		if loaded {
			ups, err = p.API.GetUpdates(ctx, p.offset(), wait)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if loaded {
				log.Warn("telegram: getUpdates failed, retrying", "in", backoff, "err", err)
			} else {
				log.Warn("telegram: reading the saved offset failed, retrying", "in", backoff, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = 500 * time.Millisecond
		for _, u := range ups {
			if ctx.Err() != nil {
				// Not begun: the next poller gets these (the offset stops before them).
				return
			}
			p.handle(ctx, u, log)
		}
	}
}

// handle hands u to Handle and then records it as handled: in this Poller (the next getUpdates
// confirms it to Telegram, which then drops it) and in Offsets. Both outlive ctx (finishWithin),
// so an update handled just as the poller's term ends is still recorded; only a crash between
// Handle and the save leaves it to be handled again by the next poller.
func (p *Poller) handle(ctx context.Context, u Update, log *slog.Logger) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishWithin)
	defer cancel()
	p.Handle(hctx, u)
	next := u.UpdateID + 1
	p.advance(next)
	if p.Offsets != nil {
		if err := p.Offsets.SaveOffset(hctx, p.Bot, next); err != nil {
			log.Warn("telegram: saving the offset failed (the next poller may answer this update again)", "update", u.UpdateID, "err", err)
		}
	}
}
