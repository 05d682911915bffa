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

// Poller fetches updates in the background and hands each to Handle, in order.
type Poller struct {
	API *API
	// Handle is called for every update; it runs on the poller's goroutine.
	Handle func(ctx context.Context, u Update)
	// Wait is the long-poll timeout; default 30 s.
	Wait time.Duration
	// Log receives getUpdates failures (never the token: errors of this package leave it out), so
	// an operator learns why logins stall, e.g. a 409 when a webhook is set or another process polls
	// the same bot; nil discards them.
	Log *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
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

// Stop ends polling and waits for the goroutine to exit.
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
// polls (an election among replicas).
func (p *Poller) Run(ctx context.Context) { p.run(ctx) }

func (p *Poller) run(ctx context.Context) {
	wait := p.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var offset int64
	backoff := 500 * time.Millisecond
	for ctx.Err() == nil {
		ups, err := p.API.GetUpdates(ctx, offset, wait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Warn("telegram: getUpdates failed, retrying", "in", backoff, "err", err)
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
			// Confirming offset = last id + 1 tells Telegram to drop what was handled.
			if u.UpdateID >= offset {
				offset = u.UpdateID + 1
			}
			p.Handle(ctx, u)
		}
	}
}
